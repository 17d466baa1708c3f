//go:build unix

package listwatch

import (
	"encoding/binary"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/listwatch/listwatch/internal/testwait"
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
			require.NoError(t, r.s.WaitForWatches(testwait.Context(t), 1))
			assert.Equal(t, []string{"watch " + saved}, r.requestsSince(before), "watching before the objects are read")
			_, err = r.s.Delete(watchtest.Pods, "ns", "remove")
			require.NoError(t, err)
			select {
			case <-inf.Loaded():
				t.Fatal("loaded before its objects were read")
			default:
			}
			assert.False(t, inf.HasSynced())

			_, err = pipe.Write(b[header:])
			require.NoError(t, err)
			require.NoError(t, pipe.Close())
			require.NoError(t, inf.WaitForSync(testwait.Context(t)))
			require.Eventually(t, func() bool { return assert.ObjectsAreEqual(serverView(t, r.s), cacheView(inf)) }, wait, time.Millisecond)
			if whole {
				require.Eventually(t, func() bool { return len(rec.lines()) == 3 }, wait, time.Millisecond, "%q", rec.lines())
				lines := rec.lines()
				initial := slices.Clone(lines[:2])
				slices.Sort(initial)
				assert.Equal(t, []string{"add ns/keep initial=true", "add ns/remove initial=true"}, initial)
				assert.Equal(t, "delete ns/remove unknown=false", lines[2])
				assert.Equal(t, []string{"watch " + saved}, r.requestsSince(before), "no list")
				assert.Empty(t, log.Above())
				return
			}
			require.Eventually(t, func() bool { return len(rec.lines()) == 1 }, wait, time.Millisecond, "%q", rec.lines())
			assert.Equal(t, []string{"add ns/keep initial=true"}, rec.lines(), "nothing of the snapshot")
			assert.Equal(t, "list", strings.Fields(r.requestsSince(before)[1])[0])
			above := log.Above()
			require.Len(t, above, 1, "%q", above)
			assert.True(t, strings.HasPrefix(above[0], "WARN informer: snapshot unreadable"), above[0])
		})
	}
}
