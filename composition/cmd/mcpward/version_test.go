package main

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBuildVersion(t *testing.T) {
	info := func(v string, settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Version: v}, Settings: settings}, true
		}
	}
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "3f2a1b9c0d1e2f3a4b5c"}
	dirty := debug.BuildSetting{Key: "vcs.modified", Value: "true"}
	assert.Equal(t, "v1.2.3", buildVersion("v1.2.3", info("v9")), "-ldflags wins")
	assert.Equal(t, "v0.4.0", buildVersion("", info("v0.4.0", rev)), "a module version")
	assert.Equal(t, "devel (3f2a1b9c0d1e)", buildVersion("", info("(devel)", rev)))
	assert.Equal(t, "devel (3f2a1b9c0d1e, modified)", buildVersion("", info("(devel)", rev, dirty)))
	assert.Equal(t, "devel", buildVersion("", info("")))
	assert.Equal(t, "unknown", buildVersion("", func() (*debug.BuildInfo, bool) { return nil, false }))
}

// TestVersionFlag: the built binary prints its version; -ldflags sets it.
func TestVersionFlag(t *testing.T) {
	w := newWorld(t, nil)
	r := w.run(t, "--version")
	assert.Equal(t, 0, r.code)
	assert.True(t, strings.HasPrefix(r.stdout, "mcpward devel"), r.stdout)
}
