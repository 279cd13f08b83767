package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	schemas := flag.String("schemas", "gen/schemas/onnx-schemas-1.23.1.json.gz", "operator schemas: a JSON `file`, gzip-compressed or not")
	out := flag.String("out", "ops", "`folder` to write the generated files into")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: gen [-schemas file] [-out folder]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := Generate(*schemas, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
