package onnxruntime

import (
	"fmt"
	"os"
	"sync"

	"github.com/deep500/deep500-go/backend"
	ort "github.com/yalue/onnxruntime_go"
)

// DefaultLibrary is where scripts/setup-onnxruntime.sh (make onnxruntime)
// installs the ONNX Runtime shared library.
const DefaultLibrary = "/usr/local/lib/deep500/libonnxruntime.so.1"

// EnvLibrary names the environment variable that overrides DefaultLibrary.
const EnvLibrary = "D500_ONNXRUNTIME_LIB"

// SettingLibrary is the key of backend.Options.Settings that overrides both.
const SettingLibrary = "lib"

// LibraryPath returns the library the options select: the "lib" setting,
// else $D500_ONNXRUNTIME_LIB, else DefaultLibrary.
func LibraryPath(opts backend.Options) string {
	if p := opts.Settings[SettingLibrary]; p != "" {
		return p
	}
	if p := os.Getenv(EnvLibrary); p != "" {
		return p
	}
	return DefaultLibrary
}

// runtimeEnv is ONNX Runtime's process-wide environment. onnxruntime_go
// keeps it in package variables, so one library is loaded per process and
// initialization must not race: every use goes through ensureEnv.
var runtimeEnv struct {
	mu   sync.Mutex
	path string // the library loaded; "" until one is
}

// ensureEnv loads the library at path once per process. A missing file is
// reported with the command that installs it; asking for a second, different
// library later is an error, since the first stays loaded.
func ensureEnv(path string) error {
	runtimeEnv.mu.Lock()
	defer runtimeEnv.mu.Unlock()
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("onnxruntime: the ONNX Runtime library %s is missing (install it with `make onnxruntime`, or point %s or d500's --backend-opt %s=PATH at it): %w",
			path, EnvLibrary, SettingLibrary, err)
	}
	if runtimeEnv.path != "" {
		if runtimeEnv.path != path {
			return fmt.Errorf("onnxruntime: the process already loaded %s; cannot switch to %s", runtimeEnv.path, path)
		}
		return nil
	}
	ort.SetSharedLibraryPath(path)
	// Warnings (such as "initializer X appears in graph inputs") would be
	// printed to stderr for every model; errors come back as values.
	if err := ort.InitializeEnvironment(ort.WithLogLevelFatal()); err != nil {
		return fmt.Errorf("onnxruntime: loading %s: %w", path, err)
	}
	runtimeEnv.path = path
	return nil
}

// LibraryVersion loads the ONNX Runtime library the options select (once
// per process, as New does) and returns its version, such as "1.30.0".
func LibraryVersion(opts backend.Options) (string, error) {
	if err := ensureEnv(LibraryPath(opts)); err != nil {
		return "", err
	}
	return ort.GetVersion(), nil
}
