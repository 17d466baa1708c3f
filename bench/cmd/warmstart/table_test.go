package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTableGivesMediansAndRatios(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warm.jsonl")
	lines := []string{
		`{"cold":{"synced_ms":500,"cpu_ms":800,"served_bytes":1000,"objects":50000},"warm":{"first_ready_ms":90,"synced_ms":100,"cpu_ms":100,"served_bytes":10},"snapshot_bytes":2000000,"stop_and_save_ms":30}`,
		`{"cold":{"synced_ms":600,"cpu_ms":900,"served_bytes":1000,"objects":50000},"warm":{"first_ready_ms":100,"synced_ms":200,"cpu_ms":300,"served_bytes":0},"snapshot_bytes":2000000,"stop_and_save_ms":40}`,
		`{"cold":{"synced_ms":700,"cpu_ms":1000,"served_bytes":1000,"objects":50000},"warm":{"first_ready_ms":110,"synced_ms":100,"cpu_ms":200,"served_bytes":0},"snapshot_bytes":2000000,"stop_and_save_ms":50}`,
	}
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	var out strings.Builder
	require.NoError(t, printTable(&out, []string{path}))
	rows := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, rows, 3)
	require.Equal(t, "| 50000 | 600 ms | 900 ms | 0.0 MB | 100 ms | 100 ms | 200 ms | 0 B | 5.0× | 5.0× | 100.0% | 2.0 MB | 40 ms |", rows[2])
}
