package main

import (
	"os"

	"github.com/deep500/deep500-go/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
