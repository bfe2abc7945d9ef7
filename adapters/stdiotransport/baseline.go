package stdiotransport

import (
	"slices"
	"strings"
)

// posixBaselineKeys and windowsBaselineKeys are the MCP TypeScript SDK's
// DEFAULT_INHERITED_ENV_VARS.
var (
	posixBaselineKeys   = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}
	windowsBaselineKeys = []string{
		"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH",
		"PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP",
		"USERNAME", "USERPROFILE", "PROGRAMFILES",
	}
)

// BaselineKeys returns a new copy of the environment keys the MCP
// TypeScript SDK lets a stdio child inherit by default
// (DEFAULT_INHERITED_ENV_VARS) on goos: the win32 list for "windows", the
// posix list for every other value.
func BaselineKeys(goos string) []string {
	if goos == "windows" {
		return slices.Clone(windowsBaselineKeys)
	}
	return slices.Clone(posixBaselineKeys)
}

// DefaultBaseline builds a ports.ProcessGrant.BaselineEnv for a host from
// its own environment: for each key of BaselineKeys(runtime.GOOS) that
// lookup reports present, the value is kept, an empty one included; a
// value starting with "()" (an exported shell function) is skipped, as the
// TypeScript SDK does. Pass os.LookupEnv for the process environment. The
// transport never calls this itself; it exists for the host that owns the
// authority. The result is never nil. lookup must not be nil.
func DefaultBaseline(lookup func(key string) (string, bool)) map[string]string {
	return baselineFor(currentGOOS, lookup)
}

func baselineFor(goos string, lookup func(string) (string, bool)) map[string]string {
	keys := BaselineKeys(goos)
	env := make(map[string]string, len(keys))
	for _, k := range keys {
		v, ok := lookup(k)
		if !ok || strings.HasPrefix(v, "()") {
			continue
		}
		env[k] = v
	}
	return env
}

// validEnvKey reports whether k can be set as an environment key: not
// empty, and free of '=' and NUL.
func validEnvKey(k string) bool {
	return k != "" && !strings.ContainsAny(k, "=\x00")
}

// validEnvValue reports whether v can be set as an environment value.
func validEnvValue(v string) bool {
	return !strings.ContainsRune(v, 0)
}
