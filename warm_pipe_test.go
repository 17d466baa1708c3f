//go:build unix

package listwatch

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/listwatch/listwatch/testkit/parked"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decision 32: the watch from the snapshot's version is opened once its
// header is read, while its objects load (here from a pipe that holds them
// back), and is handed to the reflector only after them: a deletion sent
// meanwhile finds what it deletes, and confirms the snapshot. A snapshot
// found cut short only then is dropped like any other: a list, a Warn, and
// none of its objects heard of.
func TestWarmStartWatchesWhileLoading(t *testing.T) {
	for _, whole := range []bool{true, false} {
		t.Run(map[bool]string{true: "whole", false: "cut"}[whole], func(t *testing.T) {
			r := newWarmRig(t, "keep", "remove")
			saved := r.coldRun(t)
			b, err := os.ReadFile(r.path())
			require.NoError(t, err)
			if !whole {
				b = b[:len(b)-2]
			}
			require.NoError(t, os.Remove(r.path()))
			require.NoError(t, syscall.Mkfifo(r.path(), 0o600))
			// Read-write: opening does not wait for the informer, and the
			// few bytes fit the pipe's buffer.
			pipe, err := os.OpenFile(r.path(), os.O_RDWR, 0)
			require.NoError(t, err)
			defer pipe.Close()
			header := 12 + int(binary.LittleEndian.Uint32(b[8:12]))
			_, err = pipe.Write(b[:header])
			require.NoError(t, err)

			before := len(r.s.Requests())
			inf, log := r.informer()
			rec := newRecorder()
			_, err = inf.AddEventHandler(rec)
			require.NoError(t, err)
			run(t, inf)
			// The server's count of open watches may still hold the cold
			// run's, so wait for this informer's request itself: the header
			// was read (the pipe is open for reading) once it is sent.
			require.Eventually(t, func() bool { return len(r.requestsSince(before)) > 0 }, wait, time.Millisecond)
			assert.Equal(t, []string{"watch " + saved}, r.requestsSince(before), "watching before the objects are read")
			_, err = r.s.Delete(watchtest.Pods, "ns", "remove")
			require.NoError(t, err)
			select {
			case <-inf.warm.loaded:
				t.Fatal("loaded before its objects were read")
			default:
			}
			assert.False(t, inf.HasSynced())

			_, err = pipe.Write(b[header:])
			require.NoError(t, err)
			require.NoError(t, pipe.Close())
			require.NoError(t, inf.Wait(testwait.Context(t)))
			require.Eventually(t, func() bool { return assert.ObjectsAreEqual(serverView(t, r.s), cacheView(inf)) }, wait, time.Millisecond)
			if whole {
				require.Eventually(t, func() bool { return len(rec.lines()) == 3 }, wait, time.Millisecond, "%q", rec.lines())
				lines := rec.lines()
				initial := slices.Clone(lines[:2])
				slices.Sort(initial)
				assert.Equal(t, []string{"add ns/keep initial=true", "add ns/remove initial=true"}, initial)
				assert.Equal(t, "delete ns/remove unknown=false", lines[2])
				assert.Equal(t, []string{"watch " + saved}, r.requestsSince(before), "no list")
				assert.Equal(t, []string{"INFO informer: restored snapshot; awaiting the server's confirmation", "INFO informer: warm start confirmed by the server; listed nothing"}, said(log))
				return
			}
			require.Eventually(t, func() bool { return len(rec.lines()) == 1 }, wait, time.Millisecond, "%q", rec.lines())
			assert.Equal(t, []string{"add ns/keep initial=true"}, rec.lines(), "nothing of the snapshot")
			assert.Equal(t, "list", strings.Fields(r.requestsSince(before)[1])[0])
			assertSnapshotDropped(t, log)
		})
	}
}

// A snapshot that is slow to open (a network file system; here a pipe no
// one writes to yet) holds up Run only: the informer's lock is not held
// across the file system, so the waits still end with their context and
// handlers can still be added (decision 32).
func TestSlowSnapshotOpenHoldsNoLock(t *testing.T) {
	r := newWarmRig(t, "keep")
	r.coldRun(t)
	b, err := os.ReadFile(r.path())
	require.NoError(t, err)
	require.NoError(t, os.Remove(r.path()))
	require.NoError(t, syscall.Mkfifo(r.path(), 0o600))

	inf, _ := r.informer()
	run(t, inf)
	require.Eventually(t, func() bool { return parked.Running("snapshot.Open(") }, wait, time.Millisecond,
		"Run opening the snapshot")
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := inf.AddEventHandler(newRecorder())
		done <- errors.Join(err, inf.Wait(ctx))
	}()
	err = testwait.Recv(t, done, "AddEventHandler and Wait while Run opens the snapshot")
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// Let Run go on: the writer opens the pipe and hands it the snapshot.
	pipe, err := os.OpenFile(r.path(), os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = pipe.Write(b)
	require.NoError(t, err)
	require.NoError(t, pipe.Close())
	testwait.Recv(t, inf.warm.loaded, "the snapshot loaded")
	assert.True(t, inf.restored())
}
