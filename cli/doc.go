// Package cli is the d500 command-line tool: its commands, their flags and
// exit statuses (see cmd/d500 for the usage of each command). It is a
// package rather than the command itself so that a program can build d500
// with something of its own added, such as a custom operator registered
// with native.RegisterKernel before Main runs (examples/customop/d500 does).
package cli
