package listwatch

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestBehaviourListNamesRealTests keeps docs/behaviour.md honest: every
// numbered behaviour and every difference names at least one test, each named
// test exists, and the test itself says which entry it pins ("conformance N"
// or "decision N" in its body or doc). Renaming a test, or listing one that
// does not check the behaviour, fails here.
func TestBehaviourListNamesRealTests(t *testing.T) {
	entries := readBehaviourList(t, "docs/behaviour.md")
	pinned := map[string]map[string]string{} // package dir -> test name -> its mentions
	for _, e := range entries {
		if len(e.tests) == 0 {
			t.Errorf("%s names no test", e.label())
			continue
		}
		for _, ref := range e.tests {
			dir, name, _ := strings.Cut(ref, ".")
			if dir == "listwatch" {
				dir = "."
			}
			key := dir
			if pinned[key] == nil {
				pinned[key] = mentionsByTest(t, dir)
			}
			mentions, ok := pinned[key][name]
			if !ok {
				t.Errorf("%s names %s, which does not exist", e.label(), ref)
				continue
			}
			if !strings.Contains(mentions, "|"+e.label()+"|") {
				t.Errorf("%s names %s, which does not mention %q", e.label(), ref, e.label())
			}
		}
	}
	for n := 1; n <= 90; n++ {
		if n >= 42 && n <= 47 { // RealFIFO: described, not reproduced (decision 2)
			continue
		}
		if !hasEntry(entries, "conformance", n) {
			t.Errorf("conformance %d is missing from docs/behaviour.md", n)
		}
	}
	// Differences are numbered without gaps, so a reader never wonders
	// what a missing number was.
	for n, want := 0, 1; n < len(entries); n++ {
		if e := entries[n]; e.kind == "decision" {
			if e.num != want {
				t.Errorf("%s follows decision %d: differences are numbered without gaps", e.label(), want-1)
			}
			want = e.num + 1
		}
	}
}

type behaviourEntry struct {
	kind  string // "conformance" or "decision"
	num   int
	tests []string
}

func (e behaviourEntry) label() string { return fmt.Sprintf("%s %d", e.kind, e.num) }

func hasEntry(entries []behaviourEntry, kind string, n int) bool {
	for _, e := range entries {
		if e.kind == kind && e.num == n {
			return true
		}
	}
	return false
}

var (
	entryLine = regexp.MustCompile(`^(D?)(\d+)\. `)
	testRef   = regexp.MustCompile("`([a-z0-9/]+\\.Test\\w+)`")
	mention   = regexp.MustCompile(`(?i)(conformance|decision)s? (\d+(?:(?:, | and | or |/)\d+)*)`)
	number    = regexp.MustCompile(`\d+`)
)

func readBehaviourList(t *testing.T, path string) []behaviourEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var entries []behaviourEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		m := entryLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		e := behaviourEntry{kind: "conformance"}
		if m[1] == "D" {
			e.kind = "decision"
		}
		e.num, _ = strconv.Atoi(m[2])
		for _, r := range testRef.FindAllStringSubmatch(sc.Text(), -1) {
			e.tests = append(e.tests, r[1])
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(entries) < 90 {
		t.Fatalf("%s: found %d entries; is the format still \"N. text — `pkg.TestName`\"?", path, len(entries))
	}
	return entries
}

// mentionsByTest maps each Test function of the package in dir to the labels
// mentioned in it, as "|conformance 13|decision 1|". A mention counts for the
// function whose doc or body holds it, or else for the next function below it
// (a comment heading a group of tests).
func mentionsByTest(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		type span struct {
			name       string
			start, end int
		}
		var funcs []span
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			start := fd.Pos()
			if fd.Doc != nil {
				start = fd.Doc.Pos()
			}
			funcs = append(funcs, span{fd.Name.Name, fset.Position(start).Offset, fset.Position(fd.End()).Offset})
			if strings.HasPrefix(fd.Name.Name, "Test") {
				out[fd.Name.Name] += "|"
			}
		}
		for _, m := range mention.FindAllSubmatchIndex(src, -1) {
			owner := ""
			for _, f := range funcs {
				if m[0] >= f.start && m[0] < f.end {
					owner = f.name
					break
				}
				if f.start > m[0] {
					owner = f.name
					break
				}
			}
			if _, ok := out[owner]; !ok {
				continue
			}
			kind := strings.ToLower(string(src[m[2]:m[3]]))
			for _, n := range number.FindAll(src[m[4]:m[5]], -1) {
				out[owner] += kind + " " + string(n) + "|"
			}
		}
	}
	return out
}
