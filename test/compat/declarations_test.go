package compat

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sourceFlag is a flag as a package's source declares it: its name, the
// type its constructor gives it (pflag's Value.Type(), "" for Var, whose
// value says) and its default (pflag's DefValue) when the source spells
// it out as a constant.
type sourceFlag struct {
	name, typ, def string
	hasDef         bool
	pos            token.Position
}

// flagPackages are the packages whose calls declare flags: pflag, and the
// standard library's, whose flags pflag takes over with the same types
// (AddGoFlagSet).
var flagPackages = []string{"github.com/spf13/pflag", "flag"}

// flagTypes maps the constructors of flagPackages (without their Var and P
// suffixes) to the type of the flag they declare.
var flagTypes = map[string]string{
	"Bool": "bool", "BoolFunc": "boolFunc", "Count": "count", "Duration": "duration",
	"Float32": "float32", "Float64": "float64", "Func": "func",
	"Int": "int", "Int8": "int8", "Int16": "int16", "Int32": "int32", "Int64": "int64",
	"Uint": "uint", "Uint8": "uint8", "Uint16": "uint16", "Uint32": "uint32", "Uint64": "uint64",
	"String": "string", "StringArray": "stringArray", "StringSlice": "stringSlice",
	"StringToString": "stringToString", "IntSlice": "intSlice", "BoolSlice": "boolSlice",
}

// timeUnits are the time package's duration constants, for defaults such
// as 5*time.Minute.
var timeUnits = map[string]time.Duration{
	"Nanosecond": time.Nanosecond, "Microsecond": time.Microsecond, "Millisecond": time.Millisecond,
	"Second": time.Second, "Minute": time.Minute, "Hour": time.Hour,
}

// sourceFlags returns the flags that files (one package's) declare: calls
// of <flag package>.<constructor>(...) and <flag package>.CommandLine.
// <constructor>(...). A call of a flag package's constructor whose name is
// not a string literal is an error: its flag cannot be read from source.
func sourceFlags(fset *token.FileSet, files []*ast.File) ([]sourceFlag, error) {
	var flags []sourceFlag
	var errs []string
	for _, file := range files {
		imports := importNames(file)
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !isFlagSet(sel.X, imports) {
				return true
			}
			f, ok, err := declaredFlag(sel.Sel.Name, call.Args, imports)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", fset.Position(call.Pos()), err))
			}
			if ok {
				f.pos = fset.Position(call.Pos())
				flags = append(flags, f)
			}
			return true
		})
	}
	if errs != nil {
		return flags, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return flags, nil
}

// importNames maps the names a file refers to flagPackages and time by to
// their import paths.
func importNames(file *ast.File) map[string]string {
	names := map[string]string{}
	for _, imp := range file.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = path
	}
	return names
}

// isFlagSet tells whether x is a flag package or its CommandLine.
func isFlagSet(x ast.Expr, imports map[string]string) bool {
	if sel, ok := x.(*ast.SelectorExpr); ok && sel.Sel.Name == "CommandLine" {
		x = sel.X
	}
	id, ok := x.(*ast.Ident)
	if !ok {
		return false
	}
	path := imports[id.Name]
	return path == flagPackages[0] || path == flagPackages[1]
}

// declaredFlag reads a constructor call: Kind(name, value, usage),
// KindP(name, shorthand, value, usage), KindVar(p, name, value, usage),
// KindVarP(p, name, shorthand, value, usage), Var(value, name, usage) and
// VarP(value, name, shorthand, usage). ok is false for other functions.
func declaredFlag(fn string, args []ast.Expr, imports map[string]string) (f sourceFlag, ok bool, err error) {
	kind, shorthand := fn, false
	if k, found := strings.CutSuffix(kind, "P"); found && k != "" {
		kind, shorthand = k, true
	}
	nameAt, valueAt := 0, 1
	if k, found := strings.CutSuffix(kind, "Var"); found {
		kind, nameAt, valueAt = k, 1, 2
	}
	if shorthand {
		valueAt++
	}
	if kind != "" {
		if f.typ, ok = flagTypes[kind]; !ok {
			return f, false, nil
		}
	}
	if len(args) <= nameAt {
		return f, false, fmt.Errorf("%s with %d arguments", fn, len(args))
	}
	lit, isLit := args[nameAt].(*ast.BasicLit)
	if !isLit || lit.Kind != token.STRING {
		return f, false, fmt.Errorf("%s: the flag's name is not a string literal", fn)
	}
	f.name, _ = strconv.Unquote(lit.Value)
	if kind != "" && len(args) > valueAt {
		if v := constValue(args[valueAt], imports); v.Kind() != constant.Unknown {
			f.def, f.hasDef = defValue(f.typ, v)
		}
	}
	return f, true, nil
}

// constValue evaluates a constant expression of literals, true, false and
// time's units; anything else is unknown.
func constValue(e ast.Expr, imports map[string]string) constant.Value {
	switch e := e.(type) {
	case *ast.BasicLit:
		return constant.MakeFromLiteral(e.Value, e.Kind, 0)
	case *ast.Ident:
		if e.Name == "true" || e.Name == "false" {
			return constant.MakeBool(e.Name == "true")
		}
	case *ast.ParenExpr:
		return constValue(e.X, imports)
	case *ast.UnaryExpr:
		return constant.UnaryOp(e.Op, constValue(e.X, imports), 0)
	case *ast.BinaryExpr:
		x, y := constValue(e.X, imports), constValue(e.Y, imports)
		if x.Kind() == constant.Unknown || y.Kind() == constant.Unknown {
			return constant.MakeUnknown()
		}
		return constant.BinaryOp(x, e.Op, y)
	case *ast.SelectorExpr:
		if pkg, ok := e.X.(*ast.Ident); ok && imports[pkg.Name] == "time" {
			if d, ok := timeUnits[e.Sel.Name]; ok {
				return constant.MakeInt64(int64(d))
			}
		}
	}
	return constant.MakeUnknown()
}

// defValue formats v as pflag's DefValue of a flag of type typ.
func defValue(typ string, v constant.Value) (string, bool) {
	switch typ {
	case "string":
		if v.Kind() == constant.String {
			return constant.StringVal(v), true
		}
	case "bool":
		if v.Kind() == constant.Bool {
			return strconv.FormatBool(constant.BoolVal(v)), true
		}
	case "duration":
		if d, exact := constant.Int64Val(constant.ToInt(v)); exact {
			return time.Duration(d).String(), true
		}
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		if i := constant.ToInt(v); i.Kind() == constant.Int {
			return i.ExactString(), true
		}
	case "float32", "float64":
		if f := constant.ToFloat(v); f.Kind() == constant.Float || f.Kind() == constant.Int {
			x, _ := constant.Float64Val(f)
			bits := 64
			if typ == "float32" {
				bits = 32
			}
			return strconv.FormatFloat(x, 'g', -1, bits), true
		}
	}
	return "", false
}

// sourceGates returns the feature gates that files (one package's) add
// with a map literal of featuregate.FeatureSpec, keyed by constants of the
// package, as --help lists them: without GA, deprecated and pre-alpha gates,
// which component-base leaves out of it. Maturity is FeatureSpec's
// PreRelease ("ALPHA", "BETA"). An error says that no such map was found,
// or that an entry could not be read.
func sourceGates(fset *token.FileSet, files []*ast.File) ([]gateSpec, error) {
	consts := stringConsts(files)
	var gates []gateSpec
	var errs []string
	found := false
	for _, file := range files {
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok || !isFeatureSpecMap(lit.Type) {
				return true
			}
			found = true
			for _, elt := range lit.Elts {
				g, listed, err := featureSpec(elt, consts)
				switch {
				case err != nil:
					errs = append(errs, fmt.Sprintf("%s: %v", fset.Position(elt.Pos()), err))
				case listed:
					gates = append(gates, g)
				}
			}
			return false
		})
	}
	switch {
	case !found:
		return nil, fmt.Errorf("no map[featuregate.Feature]featuregate.FeatureSpec literal")
	case errs != nil:
		return gates, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return gates, nil
}

// stringConsts maps the package's string constants to their values.
func stringConsts(files []*ast.File) map[string]string {
	consts := map[string]string{}
	for _, file := range files {
		for _, decl := range file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						consts[name.Name], _ = strconv.Unquote(lit.Value)
					}
				}
			}
		}
	}
	return consts
}

// isFeatureSpecMap tells whether t is map[featuregate.Feature]featuregate.FeatureSpec.
func isFeatureSpecMap(t ast.Expr) bool {
	m, ok := t.(*ast.MapType)
	return ok && selectorName(m.Key) == "featuregate.Feature" && selectorName(m.Value) == "featuregate.FeatureSpec"
}

// selectorName is "pkg.Name" for a selector of a package, else "".
func selectorName(e ast.Expr) string {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	return pkg.Name + "." + sel.Sel.Name
}

// featureSpec reads `Name: {Default: true, PreRelease: featuregate.Beta}`
// (Default false when left out); listed is false for the gates --help
// leaves out.
func featureSpec(elt ast.Expr, consts map[string]string) (g gateSpec, listed bool, err error) {
	kv, ok := elt.(*ast.KeyValueExpr)
	var key *ast.Ident
	if ok {
		key, ok = kv.Key.(*ast.Ident)
	}
	if ok {
		g.name, ok = consts[key.Name]
	}
	var spec *ast.CompositeLit
	if ok {
		spec, ok = kv.Value.(*ast.CompositeLit)
	}
	if !ok {
		return g, false, fmt.Errorf("want a string constant of the package as the key and a FeatureSpec literal")
	}
	g.def = "false"
	for _, field := range spec.Elts {
		f, ok := field.(*ast.KeyValueExpr)
		if !ok {
			return g, false, fmt.Errorf("gate %s: FeatureSpec without field names", g.name)
		}
		switch name, _ := f.Key.(*ast.Ident); {
		case name == nil:
		case name.Name == "Default":
			v := constValue(f.Value, nil)
			if v.Kind() != constant.Bool {
				return g, false, fmt.Errorf("gate %s: Default is not true or false", g.name)
			}
			g.def = strconv.FormatBool(constant.BoolVal(v))
		case name.Name == "PreRelease":
			switch selectorName(f.Value) {
			case "featuregate.Alpha":
				g.maturity = "ALPHA"
			case "featuregate.Beta":
				g.maturity = "BETA"
			case "featuregate.GA", "featuregate.Deprecated", "featuregate.PreAlpha":
				return g, false, nil
			default:
				return g, false, fmt.Errorf("gate %s: PreRelease is none of featuregate's", g.name)
			}
		}
	}
	if g.maturity == "" {
		return g, false, fmt.Errorf("gate %s: no PreRelease", g.name)
	}
	return g, true, nil
}

// parseSource parses one file of Go source for the tests below.
func parseSource(t *testing.T, src string) (*token.FileSet, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "main.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	return fset, []*ast.File{file}
}

func TestSourceFlags(t *testing.T) {
	const header = "package main\n\nimport (\n\tgoflag \"flag\"\n\tflag \"github.com/spf13/pflag\"\n\t\"time\"\n\t\"strings\"\n)\n\n"
	tests := []struct {
		name, src string
		want      []sourceFlag
		err       bool
	}{
		{"a constructor gives the type and the default",
			`var a = flag.String("master", "", "URL")`,
			[]sourceFlag{{name: "master", typ: "string", def: "", hasDef: true}}, false},
		{"a duration's default is formatted as pflag does",
			`var a = flag.Duration("retry", 5*time.Minute, "")`,
			[]sourceFlag{{name: "retry", typ: "duration", def: "5m0s", hasDef: true}}, false},
		{"a float32's default too",
			`var a = flag.Float32("qps", 1, "")`,
			[]sourceFlag{{name: "qps", typ: "float32", def: "1", hasDef: true}}, false},
		{"a negative int",
			`var a = flag.Int("len", -1, "")`,
			[]sourceFlag{{name: "len", typ: "int", def: "-1", hasDef: true}}, false},
		{"Var and P variants put the name and the value elsewhere",
			`func f() { var s string; flag.StringVarP(&s, "name", "n", "x", ""); flag.BoolP("verbose", "v", true, "") }`,
			[]sourceFlag{{name: "name", typ: "string", def: "x", hasDef: true}, {name: "verbose", typ: "bool", def: "true", hasDef: true}}, false},
		{"Var's type is its value's, unknown here",
			`func f() { flag.Var(nil, "feature-gates", "gates") }`,
			[]sourceFlag{{name: "feature-gates"}}, false},
		{"a default that is a variable is unknown",
			`var d = "x"; var a = flag.String("dir", d, "")`,
			[]sourceFlag{{name: "dir", typ: "string"}}, false},
		{"the standard flag package and CommandLine declare flags too",
			`var a = goflag.Bool("std", false, ""); var b = flag.CommandLine.Uint("threads", 100, "")`,
			[]sourceFlag{{name: "std", typ: "bool", def: "false", hasDef: true}, {name: "threads", typ: "uint", def: "100", hasDef: true}}, false},
		{"other functions of the flag packages declare nothing",
			`func f() { flag.Parse(); flag.CommandLine.AddGoFlagSet(goflag.CommandLine); _ = strings.Fields("") }`,
			nil, false},
		{"a name that is not a literal cannot be read",
			`const n = "x"; var a = flag.String(n, "", "")`,
			nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sourceFlags(parseSource(t, header+tt.src))
			for i := range got {
				got[i].pos = token.Position{}
			}
			if (err != nil) != tt.err || !slices.Equal(got, tt.want) {
				t.Errorf("sourceFlags() = %+v, %v; want %+v (error: %v)", got, err, tt.want, tt.err)
			}
		})
	}
}

func TestSourceGates(t *testing.T) {
	const header = "package features\n\nimport \"k8s.io/component-base/featuregate\"\n\nconst (\n\tA featuregate.Feature = \"A\"\n\tB featuregate.Feature = \"B\"\n)\n\n"
	tests := []struct {
		name, src string
		want      []gateSpec
		err       bool
	}{
		{"alpha and beta gates are listed with their defaults",
			`var m = map[featuregate.Feature]featuregate.FeatureSpec{A: {Default: true, PreRelease: featuregate.Beta}, B: {PreRelease: featuregate.Alpha}}`,
			[]gateSpec{{"A", "BETA", "true"}, {"B", "ALPHA", "false"}}, false},
		{"GA and deprecated gates are not, as --help leaves them out",
			`var m = map[featuregate.Feature]featuregate.FeatureSpec{A: {Default: true, PreRelease: featuregate.GA}, B: {PreRelease: featuregate.Deprecated}}`,
			nil, false},
		{"a package without the map is an error: its source changed shape",
			`var m = map[string]bool{}`,
			nil, true},
		{"a key that is not a constant of the package cannot be read",
			`var m = map[featuregate.Feature]featuregate.FeatureSpec{"C": {PreRelease: featuregate.Alpha}}`,
			nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sourceGates(parseSource(t, header+tt.src))
			if (err != nil) != tt.err || !slices.Equal(got, tt.want) {
				t.Errorf("sourceGates() = %+v, %v; want %+v (error: %v)", got, err, tt.want, tt.err)
			}
		})
	}
}
