package property

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// repoRoot is the repository, seen from this package's directory.
const repoRoot = "../.."

// TestNoComponentReadsNamespaces keeps a premise of the metadata property
// (metadata_test.go): no component reads Namespace objects, so their labels
// (kubernetes.io/metadata.name included) and annotations, which a
// namespace's owner may set, cannot change a decision, and the property
// need not generate them. It fails when code outside tests gets, lists or
// watches Namespaces: then the property must decorate namespaces too. (No
// component may either: test/manifests checks that each role in deploy/
// grants exactly what its component uses, and none grants namespaces.)
func TestNoComponentReadsNamespaces(t *testing.T) {
	fset := token.NewFileSet()
	for _, dir := range []string{"cmd", "pkg"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, pos := range namespaceReads(f) {
				t.Errorf("%s reads Namespaces: generate namespace metadata in TestTenantMetadataWidensNoAccess, then update this test", fset.Position(pos))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// namespaceReads returns where f uses the core/v1 Namespace types, a
// Namespace lister or informer, or calls Namespaces() (the clientset's and
// the informer factory's accessor).
func namespaceReads(f *ast.File) []token.Pos {
	core := map[string]bool{}
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path == "k8s.io/api/core/v1" {
			name := "v1"
			if imp.Name != nil {
				name = imp.Name.Name
			}
			core[name] = true
		}
	}
	var found []token.Pos
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Namespaces" && len(n.Args) == 0 {
				found = append(found, n.Pos())
			}
		case *ast.SelectorExpr:
			x, ok := n.X.(*ast.Ident)
			switch {
			case ok && core[x.Name] && slices.Contains([]string{"Namespace", "NamespaceList"}, n.Sel.Name),
				slices.Contains([]string{"NamespaceLister", "NamespaceInformer"}, n.Sel.Name):
				found = append(found, n.Pos())
			}
		}
		return true
	})
	return found
}
