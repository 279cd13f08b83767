// Command _asm generates the gemm package's AVX-512 assembly with avo:
// the micro-kernels (-file gemm) and the FMA-throughput loops its
// benchmarks measure the machine's peak with (-file peak). The package's
// doc.go runs it through go:generate.
package main

import (
	"flag"
	"fmt"
	"os"

	. "github.com/mmcloughlin/avo/build"
)

func main() {
	file := flag.String("file", "", "what to generate: gemm (micro-kernels) or peak (FMA loops)")
	flag.Parse()
	ConstraintExpr("amd64,!purego")
	switch *file {
	case "gemm":
		for _, k := range kernels {
			k.generate()
		}
	case "peak":
		generatePeakLoops()
	default:
		fmt.Fprintf(os.Stderr, "unknown -file %q\n", *file)
		os.Exit(2)
	}
	Generate()
}
