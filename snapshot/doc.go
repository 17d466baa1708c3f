// Package snapshot saves an informer's cache to a file and reads it back,
// so that a restarted process can serve its cache at once and resume the
// watch from the saved resourceVersion instead of listing everything again
// (a warm start; see listwatch.Informer.Snapshot).
//
// Objects are kept as the client holds them — the server's JSON after the
// client's projection and transform, with where its metadata fields lie
// (raw.Object's binary form) — in a file written atomically: a temporary
// file, fsync, rename, fsync of the directory. A crash at any point leaves
// the previous snapshot or the new one, never a mix; a file that is cut
// short or changed fails its checksum and is refused. Reading rebuilds
// each object without scanning its JSON again, which makes a read several
// times quicker than decoding the same objects from a list.
//
//	key := snapshot.Key{Server: "https://10.0.0.1:6443", Resource: "pods.v1"}
//	err := snapshot.WriteFile(path, &snapshot.Snapshot{Key: key, ResourceVersion: rv, Objects: objs, Written: now})
//	snap, err := snapshot.ReadFile(path, key, snapshot.Limits{})
//
// Open reads only the header, for a caller to act on the resourceVersion
// while Reader.Read reads the objects.
//
// # Format (version 2)
//
//	magic    "lwsnap" and the version, a big-endian uint16
//	header   uint32 length (little-endian), then JSON: the hashed server,
//	         resource, namespace, selectors, shape, resourceVersion, time
//	         written, raw.BinaryVersion, object count and bytes of JSON
//	objects  for each, uint32 length, then the object's binary form
//	         (raw.Object.AppendBinary)
//	trailer  CRC-32C (Castagnoli) of everything before it, uint32
//
// The checksum guards against torn writes and media errors, not an
// attacker: whoever can write the file could write a matching SHA-256 as
// well, and without a key neither proves anything. CRC-32C runs at
// memory speed on current CPUs (SSE4.2, ARMv8 CRC), so checking a
// 200 MB snapshot costs milliseconds where SHA-256 would cost a large part
// of the time a warm start saves.
package snapshot
