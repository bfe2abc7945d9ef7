package cmdtest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestTimedOutAfter(t *testing.T) {
	for _, c := range []struct {
		s, prefix, suffix string
		want              time.Duration
		ok                bool
	}{
		{"mcpward: timed out after 0.3s (--call-timeout 300ms)\n", `(?m)^mcpward: `, ` \(--call-timeout 300ms\)$`, 300 * time.Millisecond, true},
		{"mcpward: timed out after 12.4s (--call-timeout 300ms)", `^mcpward: `, ` \(--call-timeout 300ms\)$`, 12400 * time.Millisecond, true},
		{"h: failed: timed out after 1m5s (--connect-timeout 30s)", `h: failed: `, ` \(--connect-timeout 30s\)`, 65 * time.Second, true},
		{"mcpward: timed out after 0.3s (--call-timeout 1s)", `^mcpward: `, ` \(--call-timeout 300ms\)$`, 0, false},
		{"mcpward: call_timeout", `^mcpward: `, ``, 0, false},
	} {
		d, ok := TimedOutAfter(c.s, c.prefix, c.suffix)
		assert.Equal(t, c.ok, ok, c.s)
		assert.Equal(t, c.want, d, c.s)
	}
}
