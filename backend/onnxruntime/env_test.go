package onnxruntime

import (
	"regexp"
	"strings"
	"testing"

	"github.com/deep500/deep500-go/backend"
)

// The library make setup installs reports its version (npm's
// onnxruntime-node 1.30.0); a library that is not there is an error naming
// its path and how to install it.
func TestLibraryVersion(t *testing.T) {
	v, err := LibraryVersion(backend.Options{})
	if err != nil || !regexp.MustCompile(`^1\.\d+\.\d+`).MatchString(v) {
		t.Errorf("LibraryVersion = %q, %v; want a version 1.x.y", v, err)
	}
	_, err = LibraryVersion(backend.Options{Settings: map[string]string{SettingLibrary: "/nonexistent/libonnxruntime.so.1"}})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/libonnxruntime.so.1") || !strings.Contains(err.Error(), "make onnxruntime") {
		t.Errorf("missing library: %v", err)
	}
}
