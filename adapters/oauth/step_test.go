package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
)

// stepKey marks the context a step's hook returned, to see that the step
// ran under it.
type stepKey struct{}

// stepRec records the steps an Options.Step is told of: begun, and
// ended with which reason ("" for success), and whether a request of the
// step ran under the hook's context.
type stepRec struct {
	mu    sync.Mutex
	begun []string
	ended []string // "step reason", in order of ending
	ctxOK bool     // a request carried the hook's context
}

func (r *stepRec) step(ctx context.Context, step string) (context.Context, func(error)) {
	r.mu.Lock()
	r.begun = append(r.begun, step)
	r.mu.Unlock()
	var once sync.Once
	return context.WithValue(ctx, stepKey{}, step), func(err error) {
		first := false
		once.Do(func() { first = true })
		r.mu.Lock()
		defer r.mu.Unlock()
		if !first {
			r.ended = append(r.ended, step+" ENDED TWICE")
			return
		}
		reason := ""
		if err != nil {
			reason = refusal.ReasonOf(err)
			if reason == "" {
				reason = "NOT A REFUSAL"
			}
		}
		r.ended = append(r.ended, step+" "+reason)
	}
}

func (r *stepRec) got() (begun, ended []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.begun...), append([]string(nil), r.ended...)
}

// stepEnv is newEnv whose Client tells rec of its steps, and whose
// ClientFunc notes whether a request ran under a step's context.
func stepEnv(t *testing.T) (*testEnv, *stepRec) {
	t.Helper()
	e := newEnv(t)
	rec := &stepRec{}
	c, err := New(Options{
		Client: func(ctx context.Context, u *url.URL) (*http.Client, error) {
			if ctx.Value(stepKey{}) != nil {
				rec.mu.Lock()
				rec.ctxOK = true
				rec.mu.Unlock()
			}
			return e.as.ts.Client(), nil
		},
		Store: e.store, Locker: e.locker, Now: e.now.Now, LockTimeout: 5 * time.Second, Step: rec.step,
	})
	require.NoError(t, err)
	e.c = c
	return e, rec
}

// TestStep: Options.Step is told of every sign-in (each way in) and every
// refresh, each ended exactly once with its outcome (the refusal the
// caller gets), the step's requests running under the hook's context; a
// SignIn a host drives ends its step at its redirect's outcome, or at
// Close when it has none.
func TestStep(t *testing.T) {
	t.Run("SignInWith", func(t *testing.T) {
		e, rec := stepEnv(t)
		require.NoError(t, e.c.SignInWith(context.Background(), e.as.server("srv"), func(authURL string) error {
			require.Equal(t, http.StatusOK, browse(t, e.as.ts, authURL))
			return nil
		}))
		begun, ended := rec.got()
		assert.Equal(t, []string{StepSignIn}, begun)
		assert.Equal(t, []string{"sign_in "}, ended)
		assert.True(t, rec.ctxOK, "discovery ran under the step's context")
	})
	for _, tt := range []struct {
		name   string
		open   func(context.CancelFunc) func(string) error
		reason string
	}{
		{"open fails", func(context.CancelFunc) func(string) error {
			return func(string) error { return errors.New("no browser " + canary) }
		}, ReasonSignInOpenFailed},
		{"canceled", func(cancel context.CancelFunc) func(string) error {
			return func(string) error { cancel(); return nil }
		}, "canceled"},
	} {
		t.Run("SignInWith "+tt.name, func(t *testing.T) {
			e, rec := stepEnv(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			err := e.c.SignInWith(ctx, e.as.server("srv"), tt.open(cancel))
			require.Equal(t, tt.reason, refusal.ReasonOf(err))
			_, ended := rec.got()
			assert.Equal(t, []string{"sign_in " + tt.reason}, ended)
		})
	}
	t.Run("Begin fails", func(t *testing.T) {
		e, rec := stepEnv(t)
		_, err := e.c.BeginSignIn(context.Background(), Server{ID: "srv", URL: e.as.URL() + "/nothing-here"})
		require.Error(t, err)
		_, ended := rec.got()
		assert.Equal(t, []string{"sign_in " + refusal.ReasonOf(err)}, ended)
	})
	t.Run("Begin then Complete", func(t *testing.T) {
		e, rec := stepEnv(t)
		p, err := e.c.BeginSignIn(context.Background(), e.as.server("srv"))
		require.NoError(t, err)
		_, ended := rec.got()
		assert.Empty(t, ended, "the sign-in waits for its redirect")
		require.NoError(t, p.Complete(context.Background(), siLocation(t, e, p.URL())))
		require.NoError(t, p.Close())
		_, ended = rec.got()
		assert.Equal(t, []string{"sign_in "}, ended, "ended by the outcome, not again by Close")
	})
	t.Run("Begin then denied", func(t *testing.T) {
		e, rec := stepEnv(t)
		p, err := e.c.BeginSignIn(context.Background(), e.as.server("srv"))
		require.NoError(t, err)
		loc := siWithQuery(t, siLocation(t, e, p.URL()), func(q url.Values) { q.Del("code"); q.Set("error", "access_denied") })
		require.Error(t, p.Complete(context.Background(), loc))
		require.NoError(t, p.Close())
		_, ended := rec.got()
		assert.Equal(t, []string{"sign_in " + ReasonSignInDenied}, ended)
	})
	t.Run("Begin then Close", func(t *testing.T) {
		e, rec := stepEnv(t)
		p, err := e.c.BeginSignIn(context.Background(), e.as.server("srv"))
		require.NoError(t, err)
		require.NoError(t, p.Close())
		require.NoError(t, p.Close())
		_, ended := rec.got()
		assert.Equal(t, []string{"sign_in canceled"}, ended, "abandoned")
	})
	t.Run("client credentials and their renewal", func(t *testing.T) {
		e, rec := stepEnv(t)
		secret := "cc-secret-" + canary
		e.as.set(func(f *fakeAS) { f.secrets["svc"] = secret })
		s := e.as.server("srv")
		require.NoError(t, e.c.SignInClientCredentials(context.Background(), s, ClientCredentials{ClientID: "svc", Secret: secret}))
		a, req := tokAuth(t, e.c, s)
		_, err := a.Headers(context.Background(), req)
		require.NoError(t, err)
		e.now.Add(2 * time.Hour)
		_, err = a.Headers(context.Background(), req)
		require.NoError(t, err)
		begun, ended := rec.got()
		assert.Equal(t, []string{StepSignIn, StepRefresh}, begun)
		assert.Equal(t, []string{"sign_in ", "refresh "}, ended)
	})
	t.Run("client credentials refused", func(t *testing.T) {
		e, rec := stepEnv(t)
		err := e.c.SignInClientCredentials(context.Background(), e.as.server("srv"), ClientCredentials{})
		require.Error(t, err)
		_, ended := rec.got()
		assert.Equal(t, []string{"sign_in " + refusal.ReasonOf(err)}, ended)
	})
	t.Run("enterprise managed", func(t *testing.T) {
		e, rec := stepEnv(t)
		e.as.set(func(f *fakeAS) { f.authMethods = []string{AuthClientSecretBasic} })
		require.NoError(t, e.c.SignInEnterpriseManaged(context.Background(), e.as.server("srv"), xaa(e)))
		_, ended := rec.got()
		assert.Equal(t, []string{"sign_in "}, ended)
	})
	t.Run("workload identity refused", func(t *testing.T) {
		e, rec := stepEnv(t)
		err := e.c.SignInWorkloadIdentity(context.Background(), e.as.server("srv"), WorkloadIdentity{})
		require.Error(t, err)
		_, ended := rec.got()
		assert.Equal(t, []string{"sign_in " + refusal.ReasonOf(err)}, ended)
	})
	t.Run("refresh refused", func(t *testing.T) {
		e, rec := stepEnv(t)
		s, _ := tokSeed(t, e, "srv", nil)
		e.now.Add(2 * time.Hour)
		e.as.handle("/token", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
		a, req := tokAuth(t, e.c, s)
		_, err := a.Headers(context.Background(), req)
		require.Equal(t, ReasonUnavailable, refusal.ReasonOf(err))
		_, ended := rec.got()
		assert.Equal(t, []string{"refresh " + ReasonUnavailable}, ended)
	})
	t.Run("refresh shared by waiters is one step", func(t *testing.T) {
		e, rec := stepEnv(t)
		s, _ := tokSeed(t, e, "srv", nil)
		e.now.Add(2 * time.Hour)
		a, req := tokAuth(t, e.c, s)
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := a.Headers(context.Background(), req)
				assert.NoError(t, err)
			}()
		}
		wg.Wait()
		_, ended := rec.got()
		assert.Equal(t, []string{"refresh "}, ended)
	})
}
