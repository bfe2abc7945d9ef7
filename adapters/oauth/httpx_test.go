package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports/portstest"
)

func TestDo(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	u := func(path string) *url.URL {
		p, err := url.Parse(e.as.URL() + path)
		require.NoError(t, err)
		return p
	}
	e.as.handle("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/target?"+canary, http.StatusTemporaryRedirect)
	})
	e.as.handle("/see-other", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusSeeOther) })
	e.as.handle("/busy", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTooManyRequests) })
	e.as.handle("/down", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	e.as.handle("/big", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", DefaultMaxResponseBytes+1)))
	})
	e.as.handle("/exact", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", DefaultMaxResponseBytes)))
	})
	e.as.handle("/echo", func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "application/json", r.Header.Get("Accept"))
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte(`{"a":1}`))
	})

	t.Run("a response of any other status is returned", func(t *testing.T) {
		resp, err := e.c.get(ctx, "srv", u("/echo"))
		require.NoError(t, err)
		assert.Equal(t, http.StatusTeapot, resp.status)
		assert.Equal(t, `{"a":1}`, string(resp.body))
	})
	t.Run("a body of exactly the bound is read", func(t *testing.T) {
		resp, err := e.c.get(ctx, "srv", u("/exact"))
		require.NoError(t, err)
		assert.Len(t, resp.body, DefaultMaxResponseBytes)
	})
	for _, tt := range []struct {
		name, path string
		post       bool
		class      refusal.Class
		reason     string
	}{
		{"redirect", "/redirect", false, refusal.Refused, ReasonRedirectRefused},
		{"a POST is never redirected", "/redirect", true, refusal.Refused, ReasonRedirectRefused},
		{"3xx without Location", "/see-other", false, refusal.Refused, ReasonRedirectRefused},
		{"429", "/busy", true, refusal.Transient, ReasonUnavailable},
		{"5xx", "/down", false, refusal.Transient, ReasonUnavailable},
		{"body over the bound", "/big", false, refusal.Protocol, ReasonMetadataInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.post {
				_, err = e.c.postForm(ctx, "srv", u(tt.path), url.Values{"code": {canary}})
			} else {
				_, err = e.c.get(ctx, "srv", u(tt.path+"?q="+canary))
			}
			requireNoCanary(t, err)
			re := refusalOf(err)
			require.NotNil(t, re, "%v", err)
			assert.Equal(t, tt.class, re.Class)
			assert.Equal(t, tt.reason, re.Reason)
			assert.Equal(t, "srv", re.Server)
			assert.Equal(t, e.as.URL(), strings.TrimSuffix(re.Origin, ":443"), "names the origin")
		})
	}
	assert.Zero(t, e.as.count("/target"), "a redirect is never followed")

	t.Run("not https", func(t *testing.T) {
		p, _ := url.Parse(strings.Replace(e.as.URL(), "https://", "http://", 1) + "/echo")
		_, err := e.c.get(ctx, "srv", p)
		assert.Equal(t, ReasonURLInvalid, refusal.ReasonOf(err))
	})
	t.Run("the client func fails", func(t *testing.T) {
		plain, err := New(Options{Client: func(context.Context, *url.URL) (*http.Client, error) {
			return nil, errors.New("dial " + canary)
		}, Store: portstest.NewTokenStore(), Locker: portstest.NewLocker()})
		require.NoError(t, err)
		_, err = plain.get(ctx, "srv", u("/echo"))
		requireNoCanary(t, err)
		assert.Equal(t, ReasonUnavailable, refusal.ReasonOf(err))

		refusing, err := New(Options{Client: func(context.Context, *url.URL) (*http.Client, error) {
			return nil, refusal.New(refusal.Refused, "address_refused", "")
		}, Store: portstest.NewTokenStore(), Locker: portstest.NewLocker()})
		require.NoError(t, err)
		_, err = refusing.get(ctx, "srv", u("/echo"))
		re := refusalOf(err)
		require.NotNil(t, re)
		assert.Equal(t, "address_refused", re.Reason, "the egress refusal is passed on")
		assert.Equal(t, "srv", re.Server, "with the server filled in")
	})
	t.Run("canceled", func(t *testing.T) {
		c, cancel := context.WithCancel(ctx)
		cancel()
		_, err := e.c.get(c, "srv", u("/echo"))
		assert.Equal(t, "canceled", refusal.ReasonOf(err))
		assert.Equal(t, refusal.Transient, refusal.ClassOf(err))
	})
}

func TestNewRequiresPorts(t *testing.T) {
	cf := func(context.Context, *url.URL) (*http.Client, error) { return http.DefaultClient, nil }
	for name, o := range map[string]Options{
		"no client": {Store: portstest.NewTokenStore(), Locker: portstest.NewLocker()},
		"no store":  {Client: cf, Locker: portstest.NewLocker()},
		"no locker": {Client: cf, Store: portstest.NewTokenStore()},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := New(o)
			assert.Nil(t, c)
			assert.Equal(t, refusal.Config, refusal.ClassOf(err))
		})
	}
}
