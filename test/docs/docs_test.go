// Package docs checks the user guide against the repository: every
// relative link of every Markdown file resolves (file and heading anchor),
// docs/README.md reaches every page of docs/, README.md stays a front page
// of at most 300 lines, every flag a binary's --help prints is documented on
// that binary's page, and the code layout of docs/layout.md lists exactly
// the module's packages.
package docs

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// root is the repository's root, seen from this package's directory.
const root = "../.."

// maxFrontPageLines is the most lines README.md may have (issue 27).
const maxFrontPageLines = 300

// flagPages maps each binary under cmd/ to the page of docs/ that
// documents its flags.
var flagPages = map[string]string{
	"csi-provisioner":              "docs/provisioner.md",
	"snapshot-validation-webhook":  "docs/webhook.md",
	"volume-data-source-validator": "docs/validator.md",
	"storage-transfer-controller":  "docs/transfer.md",
}

func TestRelativeLinksResolve(t *testing.T) {
	anchors := map[string]map[string]bool{} // Markdown file -> its anchors
	for _, file := range markdownFiles(t) {
		for _, l := range links(t, file) {
			if problem := resolve(t, file, l, anchors); problem != "" {
				t.Errorf("%s:%d: link %q: %s", file, l.line, l.target, problem)
			}
		}
	}
}

func TestIndexLinksEveryPage(t *testing.T) {
	const index = "docs/README.md"
	linked := map[string]bool{}
	for _, l := range links(t, index) {
		if path, _, ok := localTarget(index, l.target); ok {
			linked[path] = true
		}
	}
	var missing []string
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		rel := relToRoot(t, path)
		if rel != index && !linked[rel] {
			missing = append(missing, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("%s does not link these pages: %s", index, strings.Join(missing, ", "))
	}
}

func TestFrontPageIsShort(t *testing.T) {
	data := read(t, "README.md")
	if n := bytes.Count(data, []byte("\n")); n > maxFrontPageLines {
		t.Errorf("README.md has %d lines, at most %d: move the detail into docs/", n, maxFrontPageLines)
	}
}

func TestEveryFlagIsDocumented(t *testing.T) {
	bin := buildBinaries(t)
	for name, page := range flagPages {
		t.Run(name, func(t *testing.T) {
			out, err := exec.Command(filepath.Join(bin, name), "--help").CombinedOutput()
			if err != nil {
				t.Fatalf("%s --help: %v\n%s", name, err, out)
			}
			flags := helpFlags(out)
			if len(flags) == 0 {
				t.Fatalf("%s --help printed no flags:\n%s", name, out)
			}
			doc := string(read(t, page))
			var missing []string
			for _, f := range flags {
				if !mentionsFlag(doc, f) {
					missing = append(missing, "--"+f)
				}
			}
			if len(missing) > 0 {
				t.Errorf("%s does not document these flags of %s: %s", page, name, strings.Join(missing, " "))
			}
		})
	}
}

func TestLayoutListsEveryPackage(t *testing.T) {
	rules := layoutBlock(t, "docs/layout.md")
	var packages []string
	for _, dir := range goList(t, "-f", "{{.Dir}}", "./cmd/...", "./internal/...", "./pkg/...") {
		packages = append(packages, relToRoot(t, dir))
	}
	missing, extra := compareLayout(rules, packages)
	if len(missing) > 0 {
		t.Errorf("docs/layout.md's layout block lacks these packages: %s", strings.Join(missing, " "))
	}
	if len(extra) > 0 {
		t.Errorf("docs/layout.md's layout block lists what is no package: %s", strings.Join(extra, " "))
	}
}

func TestAnchor(t *testing.T) {
	for name, c := range map[string]struct{ heading, want string }{
		"a word is lowercased":     {"Guarantees", "guarantees"},
		"an apostrophe is dropped": {"RBAC compared with upstream's", "rbac-compared-with-upstreams"},
		"code spans and parentheses go, their hyphens stay": {
			"Guarding snapshots that a cross-namespace restore uses (`--guard-cross-namespace-restores`)",
			"guarding-snapshots-that-a-cross-namespace-restore-uses---guard-cross-namespace-restores"},
		"a comma goes, its space stays":                    {"Metrics (`--http-endpoint`, `--metrics-path`)", "metrics---http-endpoint---metrics-path"},
		"dots and colons go":                               {"The API group: `transfer.xns-csi.io`, not `storage.k8s.io`", "the-api-group-transferxns-csiio-not-storagek8sio"},
		"a link counts by its text, emphasis by its words": {"See [the guide](docs/README.md) *now*", "see-the-guide-now"},
		"an underscore stays":                              {"snake_case stays", "snake_case-stays"},
	} {
		if got := anchor(c.heading); got != c.want {
			t.Errorf("%s: anchor(%q) = %q, want %q", name, c.heading, got, c.want)
		}
	}
}

func TestCompareLayout(t *testing.T) {
	rules := []string{"cmd/a", "internal/x", "pkg/generated/...", "internal/gone", "pkg/none/..."}
	packages := []string{"cmd/a", "internal/x", "internal/x/sub", "pkg/generated/clientset", "pkg/generated/listers/v1"}
	missing, extra := compareLayout(rules, packages)
	if want := []string{"internal/x/sub"}; !slices.Equal(missing, want) {
		t.Errorf("missing = %q, want %q", missing, want)
	}
	if want := []string{"internal/gone", "pkg/none/..."}; !slices.Equal(extra, want) {
		t.Errorf("extra = %q, want %q", extra, want)
	}
}

// link is a link of a Markdown file: its target and the line it is on.
type link struct {
	target string
	line   int
}

var (
	fenceRE      = regexp.MustCompile("^\\s*(```+|~~~+)")
	headingRE    = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	inlineLinkRE = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	refDefRE     = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	codeSpanRE   = regexp.MustCompile("(?s)``.*?``|`[^`]*`")
	// helpFlagRE is a flag at the start of a --help line, after the
	// indentation and an optional one-letter shorthand ("-v, --v").
	helpFlagRE = regexp.MustCompile(`^\s+(?:-[A-Za-z0-9], )?--([A-Za-z0-9][A-Za-z0-9-]*)`)
)

// markdownFiles lists the repository's Markdown files, relative to its
// root, leaving out vendored and cached trees.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "vendor", ".cache", ".git", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".md") {
			files = append(files, relToRoot(t, path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, "README.md") {
		t.Fatalf("no README.md under %s", root)
	}
	return files
}

// prose is a Markdown file's text with code blocks and code spans blanked
// out, line breaks kept, so that what remains are the links a reader can
// follow and the line numbers still match.
func prose(data []byte) string {
	var b strings.Builder
	var fence fences
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if fence.toggles(line) {
			b.WriteString("\n")
			continue
		}
		if !fence.inside() {
			b.WriteString(line)
		}
		b.WriteString("\n")
	}
	return codeSpanRE.ReplaceAllStringFunc(b.String(), func(span string) string {
		return strings.Map(func(r rune) rune {
			if r == '\n' {
				return r
			}
			return ' '
		}, span)
	})
}

// links returns the inline links, images and link reference definitions
// of a Markdown file.
func links(t *testing.T, file string) []link {
	t.Helper()
	text := prose(read(t, file))
	var out []link
	add := func(target string, at int) {
		out = append(out, link{target: target, line: 1 + strings.Count(text[:at], "\n")})
	}
	for _, m := range inlineLinkRE.FindAllStringSubmatchIndex(text, -1) {
		add(text[m[4]:m[5]], m[0])
	}
	for _, m := range refDefRE.FindAllStringSubmatchIndex(text, -1) {
		add(text[m[2]:m[3]], m[0])
	}
	return out
}

// localTarget splits a link of file into the repository path it points at
// (relative to the root; file itself for a bare fragment) and its
// fragment; ok is false for links out of the repository (http, mailto).
func localTarget(file, target string) (path, fragment string, ok bool) {
	if u, err := url.Parse(target); err != nil || u.Scheme != "" || strings.HasPrefix(target, "//") {
		return "", "", false
	}
	path, fragment, _ = strings.Cut(target, "#")
	if unescaped, err := url.PathUnescape(path); err == nil {
		path = unescaped
	}
	switch {
	case path == "":
		path = file
	case strings.HasPrefix(path, "/"):
		path = filepath.ToSlash(filepath.Clean(strings.TrimPrefix(path, "/")))
	default:
		path = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
	}
	return path, fragment, true
}

// resolve says what is wrong with a link of file, "" when nothing is.
func resolve(t *testing.T, file string, l link, anchors map[string]map[string]bool) string {
	t.Helper()
	path, fragment, ok := localTarget(file, l.target)
	if !ok {
		return ""
	}
	if path == ".." || strings.HasPrefix(path, "../") {
		return "points out of the repository"
	}
	info, err := os.Stat(filepath.Join(root, path))
	if err != nil {
		return fmt.Sprintf("%s does not exist", path)
	}
	if fragment == "" {
		return ""
	}
	switch {
	case info.IsDir():
		return fmt.Sprintf("%s is a directory; it has no #%s", path, fragment)
	case !strings.HasSuffix(path, ".md"):
		return "" // e.g. a line of a source file: GitHub's, not checked here
	}
	if anchors[path] == nil {
		anchors[path] = headingAnchors(read(t, path))
	}
	if !anchors[path][fragment] {
		return fmt.Sprintf("%s has no heading with the anchor #%s", path, fragment)
	}
	return ""
}

// fences follows the fenced code blocks of a Markdown file, line by line.
type fences struct{ open string }

// toggles reports whether line opens or closes a fenced block: a closing
// fence is of the opening one's character and at least as long.
func (f *fences) toggles(line string) bool {
	m := fenceRE.FindStringSubmatch(line)
	if m == nil {
		return false
	}
	switch {
	case f.open == "":
		f.open = m[1]
	case m[1][0] == f.open[0] && len(m[1]) >= len(f.open):
		f.open = ""
	}
	return true
}

// inside reports whether the last line was within a fenced block.
func (f *fences) inside() bool { return f.open != "" }

// headingAnchors are the anchors GitHub gives the headings of a Markdown
// file: the second heading with an anchor already taken gets "-1", the
// third "-2", and so on.
func headingAnchors(data []byte) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	var fence fences
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if fence.toggles(line) {
			continue
		}
		m := headingRE.FindStringSubmatch(line)
		if fence.inside() || m == nil {
			continue
		}
		a := anchor(m[2])
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// anchor is GitHub's anchor of a heading's text: the rendered text
// lowercased, every character but letters, digits, spaces, '-' and '_'
// dropped, and each space turned into '-'.
func anchor(heading string) string {
	text := inlineLinkRE.ReplaceAllString(heading, "$1")
	text = strings.NewReplacer("`", "", "*", "").Replace(text)
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// buildBinaries builds every binary of flagPages into .cache/docs-test of
// the repository and returns that directory. go build relinks a binary
// only when it is out of date, so a second run takes a second.
func buildBinaries(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join(root, ".cache", "docs-test"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-mod=vendor", "-ldflags=-s -w", "-o", dir+string(filepath.Separator))
	for name := range flagPages {
		cmd.Args = append(cmd.Args, "./cmd/"+name)
	}
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return dir
}

// helpFlags are the names of the flags a --help output lists, sorted.
func helpFlags(help []byte) []string {
	set := map[string]bool{}
	for _, line := range strings.Split(string(help), "\n") {
		if m := helpFlagRE.FindStringSubmatch(line); m != nil {
			set[m[1]] = true
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// mentionsFlag reports whether doc writes --name as a whole flag name (not
// as the start of a longer one: --leader-election is not documented by
// --leader-election-namespace).
func mentionsFlag(doc, name string) bool {
	needle := "--" + name
	for rest := doc; ; {
		i := strings.Index(rest, needle)
		if i < 0 {
			return false
		}
		before, after := rest[:i], rest[i+len(needle):]
		startsName := before == "" || !isFlagChar(rune(before[len(before)-1]))
		endsName := after == "" || !isFlagChar(rune(after[0]))
		if startsName && endsName {
			return true
		}
		rest = after
	}
}

func isFlagChar(r rune) bool {
	return r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// layoutBlock is the fenced block with the info string "layout" of a page:
// one package directory per line, or a directory followed by "/..." for it
// and every package below it.
func layoutBlock(t *testing.T, file string) []string {
	t.Helper()
	var rules []string
	in, found := false, false
	for _, line := range strings.Split(string(read(t, file)), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !in && trimmed == "```layout":
			in, found = true, true
		case in && strings.HasPrefix(trimmed, "```"):
			in = false
		case in && trimmed != "":
			rules = append(rules, trimmed)
		}
	}
	if !found {
		t.Fatalf("%s has no ```layout block", file)
	}
	return rules
}

// compareLayout returns the packages no rule covers, and the rules that
// cover no package (a plain line must name a package; a "/..." line must
// cover at least one), each sorted.
func compareLayout(rules, packages []string) (missing, extra []string) {
	used := map[string]bool{}
	for _, p := range packages {
		covered := false
		for _, r := range rules {
			if prefix, ok := strings.CutSuffix(r, "/..."); ok {
				if p == prefix || strings.HasPrefix(p, prefix+"/") {
					covered, used[r] = true, true
				}
			} else if p == r {
				covered, used[r] = true, true
			}
		}
		if !covered {
			missing = append(missing, p)
		}
	}
	for _, r := range rules {
		if !used[r] {
			extra = append(extra, r)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return missing, extra
}

func read(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// relToRoot turns a path under root (relative to this package, or
// absolute) into a slash-separated path relative to the repository's root.
func relToRoot(t *testing.T, path string) string {
	t.Helper()
	absRoot, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	absPath, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(absRoot, absPath)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(rel)
}
