package oauth

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
)

func TestCanonicalURL(t *testing.T) {
	tests := []struct {
		name, in, canon, origin string
	}{
		{"plain", "https://mcp.example.com/mcp", "https://mcp.example.com/mcp", "https://mcp.example.com:443"},
		{"host case and default port", "HTTPS://MCP.Example.COM:443/mcp", "https://mcp.example.com/mcp", "https://mcp.example.com:443"},
		{"trailing slash", "https://mcp.example.com/mcp/", "https://mcp.example.com/mcp", "https://mcp.example.com:443"},
		{"root", "https://mcp.example.com/", "https://mcp.example.com", "https://mcp.example.com:443"},
		{"no path", "https://mcp.example.com", "https://mcp.example.com", "https://mcp.example.com:443"},
		{"other port", "https://mcp.example.com:8443/a", "https://mcp.example.com:8443/a", "https://mcp.example.com:8443"},
		{"path case kept", "https://mcp.example.com/MCP", "https://mcp.example.com/MCP", "https://mcp.example.com:443"},
		{"query kept", "https://mcp.example.com/mcp?tenant=a", "https://mcp.example.com/mcp?tenant=a", "https://mcp.example.com:443"},
		{"ipv6", "https://[::1]:8443/mcp", "https://[::1]:8443/mcp", "https://[::1]:8443"},
		{"ipv6 default port", "https://[::1]/mcp", "https://[::1]/mcp", "https://[::1]:443"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			canon, origin, err := canonicalURL(tt.in, "s")
			require.NoError(t, err)
			assert.Equal(t, tt.canon, canon)
			assert.Equal(t, tt.origin, origin)
		})
	}
	for _, bad := range []string{
		"http://mcp.example.com/mcp", "ftp://x/y", "/relative", "https://", "https://u:p@x/y", "https://x/y#frag",
		"https://x/y#", "mailto:a@b", "https:opaque", "", " https://x", "https://x:notaport/",
	} {
		t.Run("refused "+bad, func(t *testing.T) {
			_, _, err := canonicalURL(bad, "s")
			assert.Equal(t, ReasonURLInvalid, refusal.ReasonOf(err))
			assert.Equal(t, refusal.Config, refusal.ClassOf(err))
			if err != nil {
				assert.NotContains(t, err.Error(), "u:p")
			}
		})
	}
}

// FuzzCanonicalURL checks that canonicalization never panics, is
// idempotent, and keeps only https URLs without userinfo or fragment.
func FuzzCanonicalURL(f *testing.F) {
	for _, s := range []string{"https://a.example/x", "HTTPS://A:443/", "https://[::1]:1/%2F", "https://a/b?c=d#e", "http://a/",
		"http://LOCALHOST:80/", "http://[::1]/x?y", "http://127.0.0.1:0/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		checkLoopbackRule(t, raw)
		canon, origin, err := canonicalURL(raw, "s")
		if err != nil {
			return
		}
		require.True(t, strings.HasPrefix(canon, "https://"), canon)
		require.True(t, strings.HasPrefix(origin, "https://"), origin)
		u, perr := url.Parse(canon)
		require.NoError(t, perr)
		require.Nil(t, u.User)
		again, origin2, err := canonicalURL(canon, "s")
		require.NoError(t, err, "canonical form %q of %q is refused", canon, raw)
		require.Equal(t, canon, again, "not idempotent for %q", raw)
		require.Equal(t, origin, origin2)
	})
}

// checkLoopbackRule checks the loopback option's canonicalization of raw:
// it accepts all the product's rule accepts, the same way; anything else
// it accepts is http on exactly localhost, 127.0.0.1 or [::1]; it is
// idempotent.
func checkLoopbackRule(t *testing.T, raw string) {
	on := urlRule{loopbackHTTP: true}
	canon, origin, err := on.canonical(raw, "s")
	pc, po, perr := urlRule{}.canonical(raw, "s")
	if perr == nil {
		require.NoError(t, err)
		require.Equal(t, pc, canon)
		require.Equal(t, po, origin)
	}
	if err != nil {
		return
	}
	if !strings.HasPrefix(canon, "https://") {
		u, perr := url.Parse(canon)
		require.NoError(t, perr)
		require.Equal(t, "http", u.Scheme)
		require.True(t, loopbackHosts[u.Hostname()], "http on %q", u.Hostname())
		require.True(t, strings.HasPrefix(origin, "http://"), origin)
	}
	again, origin2, err := on.canonical(canon, "s")
	require.NoError(t, err)
	require.Equal(t, canon, again)
	require.Equal(t, origin, origin2)
}
