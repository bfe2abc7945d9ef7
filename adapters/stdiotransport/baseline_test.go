package stdiotransport

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDefaultBaseline(t *testing.T) {
	host := map[string]string{
		"HOME":        "/home/u",
		"PATH":        "/usr/bin",
		"SHELL":       "() { :; }; echo pwned", // exported shell function: skipped
		"TERM":        "",                      // present and empty: kept empty
		"AWS_SECRET":  "s3cr3t",                // not a baseline key
		"SYSTEMROOT":  `C:\Windows`,
		"USERPROFILE": `C:\Users\u`,
	}
	lookup := func(k string) (string, bool) { v, ok := host[k]; return v, ok }
	cases := []struct {
		name string
		goos string
		want map[string]string
	}{
		{name: "posix", goos: "linux", want: map[string]string{"HOME": "/home/u", "PATH": "/usr/bin", "TERM": ""}},
		{name: "darwin is posix", goos: "darwin", want: map[string]string{"HOME": "/home/u", "PATH": "/usr/bin", "TERM": ""}},
		{name: "windows", goos: "windows", want: map[string]string{"PATH": "/usr/bin", "SYSTEMROOT": `C:\Windows`, "USERPROFILE": `C:\Users\u`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, baselineFor(tc.goos, lookup))
		})
	}
	t.Run("nothing present is empty, not nil", func(t *testing.T) {
		got := DefaultBaseline(func(string) (string, bool) { return "", false })
		assert.NotNil(t, got)
		assert.Empty(t, got)
	})
	t.Run("current GOOS", func(t *testing.T) {
		assert.Equal(t, baselineFor(currentGOOS, lookup), DefaultBaseline(lookup))
	})
}

func TestBaselineKeys(t *testing.T) {
	assert.Equal(t, []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}, BaselineKeys("linux"))
	assert.Equal(t, []string{
		"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PROCESSOR_ARCHITECTURE",
		"SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE", "PROGRAMFILES",
	}, BaselineKeys("windows"))
	k := BaselineKeys("linux")
	k[0] = "MUTATED"
	assert.Equal(t, "HOME", BaselineKeys("linux")[0], "a copy is returned")
}

func TestValidEnvKey(t *testing.T) {
	cases := []struct {
		key  string
		want bool
	}{
		{"PATH", true}, {"lower_case", true}, {"WITH SPACE", true}, {"ÜNICODE", true},
		{"", false}, {"=", false}, {"A=B", false}, {"=A", false}, {"A\x00", false},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) { assert.Equal(t, tc.want, validEnvKey(tc.key)) })
	}
}

// FuzzEnvEntry checks that every key and value mergeEnv accepts survives
// the "k=v" encoding execve uses: splitting at the first '=' gives them
// back, and nothing with a NUL gets through.
func FuzzEnvEntry(f *testing.F) {
	for _, s := range [][2]string{{"PATH", "/bin"}, {"A=B", "c"}, {"", "v"}, {"K", "a=b=c"}, {"K\x00", "v"}, {"K", "v\x00"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, k, v string) {
		env, err := mergeEnv(nil, map[string]string{k: v}, "fx")
		if err != nil {
			assert.False(t, validEnvKey(k) && validEnvValue(v), "valid entry refused")
			// The text is fixed: it cannot carry the key or the value.
			assert.Equal(t, `mcpward: config: env_invalid (server "fx"): invalid environment entry`, err.Error())
			return
		}
		entry := k + "=" + env[k]
		gotK, gotV, ok := strings.Cut(entry, "=")
		assert.True(t, ok)
		assert.Equal(t, k, gotK)
		assert.Equal(t, v, gotV)
		assert.NotContains(t, entry, "\x00")
	})
}
