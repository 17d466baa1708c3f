package snapshot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// tempPrefix starts the name of every temporary file WriteFile makes, so
// that RemoveTemporary can find those a crash left behind.
const tempPrefix = ".lwsnap-tmp-"

// WriteFile writes s to path atomically: to a temporary file in the same
// directory, synced, renamed over path, and the directory synced, so that
// after a crash path holds the old snapshot or the new one, whole.
func WriteFile(path string, s *Snapshot) error {
	return writeFile(path, s, nil)
}

// stage names the steps of writeFile, for tests that crash between them.
type stage string

const (
	stageWritten stage = "written" // the temporary file is written, not synced
	stageSynced  stage = "synced"  // it is synced, not renamed
	stageRenamed stage = "renamed" // it is renamed, the directory not synced
)

// writeFile is WriteFile; crash, if set, is called after each stage and
// an error from it stops the write there, as a crash would (leaving the
// temporary file).
func writeFile(path string, s *Snapshot, crash func(stage) error) (err error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, tempPrefix+name+"-*")
	if err != nil {
		return fmt.Errorf("snapshot write %s: %w", path, err)
	}
	tmp := f.Name()
	crashed := false
	defer func() {
		if err != nil && !crashed {
			f.Close()
			os.Remove(tmp)
		}
	}()
	step := func(st stage) error {
		if crash == nil {
			return nil
		}
		if err := crash(st); err != nil {
			crashed = true
			f.Close()
			return err
		}
		return nil
	}
	if err := Encode(f, s); err != nil {
		return fmt.Errorf("snapshot write %s: %w", path, err)
	}
	if err := step(stageWritten); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("snapshot write %s: sync: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("snapshot write %s: close: %w", path, err)
	}
	if err := step(stageSynced); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("snapshot write %s: rename: %w", path, err)
	}
	if err := step(stageRenamed); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("snapshot sync dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("snapshot sync dir %s: %w", dir, err)
	}
	return nil
}

// ReadFile reads and checks the snapshot at path: Open, Read, Close. A
// missing file is an error wrapping fs.ErrNotExist.
func ReadFile(path string, want Key, lim Limits) (*Snapshot, error) {
	rd, err := Open(path, want, lim)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	s, err := rd.Read()
	if err != nil {
		return nil, fmt.Errorf("snapshot read %s: %w", path, err)
	}
	return s, nil
}

// RemoveTemporary removes what interrupted writes of path left in its
// directory.
func RemoveTemporary(path string) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix+name+"-") {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
