// Package events records events.k8s.io/v1 Events about objects, the way a
// controller tells people what it did, with client-go's behaviour: repeats
// of an event are aggregated into a series (one Event whose series.count
// and series.lastObservedTime are patched), each object's events are rate
// limited, and recording never blocks: when the server is slow or down,
// events beyond a bounded buffer are dropped and counted, never queued
// without bound.
//
//	rec := events.New(client.Resource(events.Resource), "example.com/labeller", podName)
//	go rec.Run(ctx)
//	rec.Event(cm, events.Normal, "Labelled", "Label", "set checked=true")
//
// Two events are the same, and so one series, when they have the same
// regarding object (by uid), reason, action, type and reporting controller.
// The Event keeps the note of its first occurrence, as client-go's does:
// an event recorded four times with the notes "replicas=2" to "replicas=5"
// is one Event with note "replicas=2" and series.count 4. Set
// Recorder.NotePerOccurrence to make the note part of the sameness
// instead: each distinct note is then an Event of its own, and only
// repeats of one note are counted. A series is written at its second
// occurrence, then every SeriesFlush while it grows, and ends once it has
// not grown for SeriesExpiry; a later occurrence starts a new Event.
package events
