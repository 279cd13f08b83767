package native

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/ops"
)

// A Visit method is only ever called through an interface, so one whose
// name or signature matches no interface method (VisitSoftMax, or VisitRelu
// taking *ops.Sigmoid) compiles and is dead code: the operator silently
// keeps ops.UnsupportedVisitor's answer. These tests catch that.

// visitorInterfaces are the interfaces through which Visit methods are
// called: ops.Visitor, and the optional ones an operator's Accept or
// ops.Visit looks for with a type assertion. TestEveryVisitorInterfaceIsListed
// keeps the list complete.
var visitorInterfaces = []reflect.Type{
	reflect.TypeFor[ops.Visitor](),
	reflect.TypeFor[ops.FunctionVisitor](),
	reflect.TypeFor[ops.MeanSquaredErrorVisitor](),
	reflect.TypeFor[ops.L1LossVisitor](),
	reflect.TypeFor[ops.BinaryCrossEntropyWithLogitsVisitor](),
	reflect.TypeFor[ops.CustomVisitor](),
}

// visitorTypes are the package's visitors, checked by TestVisitMethods;
// TestEveryVisitorIsChecked keeps the list complete.
var visitorTypes = []reflect.Type{
	reflect.TypeFor[*builder](),
	reflect.TypeFor[*gradBuilder](),
}

// strayVisitMethods returns the exported methods of typ named Visit...
// that are not, with the same parameters and results, a method of one of
// ifaces.
func strayVisitMethods(typ reflect.Type, ifaces []reflect.Type) []string {
	var stray []string
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		if !strings.HasPrefix(m.Name, "Visit") {
			continue
		}
		found := false
		for _, iface := range ifaces {
			if im, ok := iface.MethodByName(m.Name); ok && sameSignature(m.Type, im.Type) {
				found = true
				break
			}
		}
		if !found {
			stray = append(stray, m.Name+" "+m.Type.String())
		}
	}
	return stray
}

// sameSignature reports whether method, a method expression's type (the
// receiver first), takes and returns what ifaceMethod does.
func sameSignature(method, ifaceMethod reflect.Type) bool {
	if method.NumIn() != ifaceMethod.NumIn()+1 || method.NumOut() != ifaceMethod.NumOut() ||
		method.IsVariadic() != ifaceMethod.IsVariadic() {
		return false
	}
	for i := range ifaceMethod.NumIn() {
		if method.In(i+1) != ifaceMethod.In(i) {
			return false
		}
	}
	for i := range ifaceMethod.NumOut() {
		if method.Out(i) != ifaceMethod.Out(i) {
			return false
		}
	}
	return true
}

func TestVisitMethodsAreVisitorMethods(t *testing.T) {
	for _, typ := range visitorTypes {
		for _, m := range strayVisitMethods(typ, visitorInterfaces) {
			t.Errorf("%v.%s is a method of no visitor interface, so nothing calls it (misspelt, or the wrong operator type?)", typ, m)
		}
	}
}

// The check above needs to know the visitors: every type of the package's
// non-test files with a Visit method must be in visitorTypes.
func TestEveryVisitorIsChecked(t *testing.T) {
	checked := map[string]bool{}
	for _, typ := range visitorTypes {
		checked[typ.Elem().Name()] = true
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 || !strings.HasPrefix(fd.Name.Name, "Visit") {
				continue
			}
			recv := fd.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			id, ok := recv.(*ast.Ident)
			if !ok || checked[id.Name] {
				continue
			}
			t.Errorf("%s: %s.%s: type %s has Visit methods but is not in visitorTypes", fset.Position(fd.Pos()), id.Name, fd.Name.Name, id.Name)
			checked[id.Name] = true // once per type
		}
	}
}

// Every interface of package ops declaring a Visit method must be in
// visitorInterfaces, or a backend's method of it would be reported stray.
func TestEveryVisitorInterfaceIsListed(t *testing.T) {
	listed := map[string]bool{}
	for _, iface := range visitorInterfaces {
		listed[iface.Name()] = true
	}
	dir := "../../ops"
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, dir+"/"+name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			it, ok := ts.Type.(*ast.InterfaceType)
			if !ok || !ts.Name.IsExported() || listed[ts.Name.Name] {
				return false
			}
			for _, m := range it.Methods.List {
				for _, id := range m.Names {
					if strings.HasPrefix(id.Name, "Visit") {
						t.Errorf("%s: ops.%s declares %s but is not in visitorInterfaces", fset.Position(ts.Pos()), ts.Name.Name, id.Name)
						return false
					}
				}
			}
			return false
		})
	}
}
