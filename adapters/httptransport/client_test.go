package httptransport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports/portstest"
)

// loopbackTLS returns Options trusting ts's certificate, with a resolver
// that never reaches DNS.
func loopbackTLS(ts *testServer) *Options {
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	o := safeOptions()
	o.TLSConfig = &tls.Config{RootCAs: pool}
	return o
}

func TestClient(t *testing.T) {
	other := newTestServer(t, true, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "other")
	}))
	srv := newTestServer(t, true, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, other.URL+"/x", http.StatusTemporaryRedirect)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	policy, err := egress.New(&egress.Options{AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	require.NoError(t, err)
	f := New(policy, loopbackTLS(srv))
	u, _ := url.Parse(srv.URL + "/meta?q=secret-query")
	ctx := context.Background()
	c, err := f.Client(ctx, u, "srv")
	require.NoError(t, err)
	defer c.CloseIdleConnections()

	t.Run("same origin", func(t *testing.T) {
		resp, err := c.Get(u.String())
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		assert.Equal(t, "ok", string(b))
	})
	t.Run("another origin is refused before it leaves", func(t *testing.T) {
		before := other.accepts()
		body := &closeRecorder{Reader: strings.NewReader("code=secret")}
		req, _ := http.NewRequest(http.MethodPost, other.URL+"/token", body)
		_, err := c.Do(req)
		requireRefusal(t, err, refusal.Refused, ReasonOriginMismatch)
		assert.Equal(t, before, other.accepts())
		assert.True(t, body.closed, "the body is closed")
		assert.NotContains(t, err.Error(), "secret")
	})
	t.Run("a redirect is refused and not followed", func(t *testing.T) {
		before := other.accepts()
		_, err := c.Get(srv.URL + "/redirect")
		requireRefusal(t, err, refusal.Refused, ReasonRedirectRefused)
		assert.Equal(t, before, other.accepts())
	})
	t.Run("refused by the policy: nothing is built", func(t *testing.T) {
		deny := refusal.New(refusal.Refused, "address_refused", "")
		f := New(portstest.DenyAllEgress(deny), safeOptions())
		c, err := f.Client(ctx, u, "srv")
		assert.Nil(t, c)
		re := requireRefusal(t, err, refusal.Refused, "address_refused")
		assert.Equal(t, "srv", re.Server)
	})
	t.Run("refused at dial time", func(t *testing.T) {
		f := New(addrDenier{}, loopbackTLS(srv))
		c, err := f.Client(ctx, u, "srv")
		require.NoError(t, err, "the URL is admitted")
		before := srv.accepts()
		_, err = c.Get(u.String())
		requireRefusal(t, err, refusal.Refused, "address_refused")
		assert.Equal(t, before, srv.accepts(), "nothing was connected")
	})
	t.Run("invalid URLs", func(t *testing.T) {
		f := New(portstest.AllowAllEgress(), safeOptions())
		for _, raw := range []string{"/relative", "https://u:p@" + srv.Listener.Addr().String(), "ftp://" + srv.Listener.Addr().String()} {
			u, _ := url.Parse(raw)
			c, err := f.Client(ctx, u, "srv")
			assert.Nil(t, c, raw)
			var re *refusal.Error
			require.True(t, errors.As(err, &re), raw)
			assert.NotContains(t, err.Error(), "u:p", raw)
		}
		c, err := f.Client(ctx, nil, "srv")
		assert.Nil(t, c)
		requireRefusal(t, err, refusal.Config, ReasonURLInvalid)
	})
}

// closeRecorder records whether Close was called.
type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

// addrDenier admits every URL and refuses every address.
type addrDenier struct{}

func (addrDenier) AdmitURL(context.Context, *url.URL) error { return nil }

func (addrDenier) AdmitAddr(context.Context, string, netip.AddrPort) error {
	return refusal.New(refusal.Refused, "address_refused", "")
}
