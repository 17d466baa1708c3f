package raw

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A batch keeps its frames' member notes, which the scanner overwrites with
// the next frame's: a frame built after later reads reads its own notes,
// not those of the frame framed last (decision 35). The second event's
// notes put its top-level "nam" where the first event's metadata.name is;
// read with the first event, they would lose its name.
func TestHeldBatchesBuildFromTheirOwnNotes(t *testing.T) {
	first := `{"type":"ADDED","object":{"metadata":{"name":"aa"}}}`
	second := `{"type":"ADDED","object":{"metadatb":1,"nam":"bb"}}`
	chunks := [][]byte{[]byte(first), []byte(second)}
	want, werr := nextLines(cloneChunks(chunks), 0)
	require.Equal(t, []string{
		`ADDED@0 /aa   {"metadata":{"name":"aa"}}`,
		`ADDED@52 /   {"metadatb":1,"nam":"bb"}`,
	}, want)
	got, batches, err := batchLines(cloneChunks(chunks), 0, true)
	require.Equal(t, 3, batches, "one batch a read, then the end")
	require.Equal(t, want, got, "built after the stream ended")
	require.Equal(t, werr.Error(), err.Error())
}
