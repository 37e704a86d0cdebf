package compat

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fixture is the argument list of a csi-provisioner container, from
// testdata/<name>.args: a header of comments naming its source, "# env:
// NAME=value" lines for the container's environment, then one argument a
// line, exactly as in the manifest's args. $(NAME) references are expanded
// from the environment, as the kubelet does.
type fixture struct {
	name string
	args []string
	env  []string // NAME=value
}

func loadFixtures(t *testing.T) []fixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.args"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in testdata: %v", err)
	}
	var fixtures []fixture
	for _, path := range paths {
		fixtures = append(fixtures, loadFixture(t, path))
	}
	return fixtures
}

func loadFixture(t *testing.T, path string) fixture {
	t.Helper()
	f := fixture{name: strings.TrimSuffix(filepath.Base(path), ".args")}
	vars := map[string]string{}
	var raw []string
	for _, line := range readLines(t, path) {
		switch {
		case strings.HasPrefix(line, "# env: "):
			kv := strings.TrimPrefix(line, "# env: ")
			name, value, ok := strings.Cut(kv, "=")
			if !ok {
				t.Fatalf("%s: malformed env line %q", path, line)
			}
			vars[name] = value
			f.env = append(f.env, kv)
		case line == "" || strings.HasPrefix(line, "#"):
		default:
			raw = append(raw, line)
		}
	}
	if len(raw) == 0 {
		t.Fatalf("%s has no arguments", path)
	}
	for _, arg := range raw {
		f.args = append(f.args, expand(arg, vars))
	}
	return f
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expand replaces $(NAME) by the variable's value; references to undefined
// variables stay as they are, as the kubelet leaves them.
func expand(arg string, vars map[string]string) string {
	return varRef.ReplaceAllStringFunc(arg, func(ref string) string {
		if v, ok := vars[varRef.FindStringSubmatch(ref)[1]]; ok {
			return v
		}
		return ref
	})
}

// readLines returns the file's lines, trimmed.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var lines []string
	scanner := bufio.NewScanner(file)
	for scanner.Scan() {
		lines = append(lines, strings.TrimSpace(scanner.Text()))
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}
