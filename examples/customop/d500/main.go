// Command d500 is the d500 tool with the example's ChannelSwish operator
// built in: every command (conformance, gradcheck, run --bench, ...) runs
// models that use it on the native backend. A program of this shape, with
// its own Register calls, is how a user's operators reach the tool.
package main

import (
	"fmt"
	"os"

	"github.com/deep500/deep500-go/cli"
	"github.com/deep500/deep500-go/examples/customop"
)

func main() {
	if err := customop.Register(); err != nil {
		fmt.Fprintln(os.Stderr, "d500:", err)
		os.Exit(1)
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
