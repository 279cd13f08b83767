// Command gen writes the generated part of package ops — a Go type per
// ONNX operator, the Visitor interface and a table of schema facts — from
// ONNX's operator schemas.
//
// Run it with `go generate ./ops`, or from the repository root:
//
//	go run ./gen [-schemas gen/schemas/onnx-schemas-1.23.1.json.gz] [-out ops]
package main
