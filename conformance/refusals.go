package conformance

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mcpward/mcpward/core/refusal"
)

// Helpers shared by the suites of the policy ports (egress, authenticator,
// process authority, workspace trust).

// reasonWord is what every refusal's Reason must match: a stable
// lower_snake_case word.
var reasonWord = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// originForm is what a refusal's Origin must match when not empty:
// scheme://host[:port], nothing more (no userinfo, path or query).
var originForm = regexp.MustCompile(`^[a-z][a-z0-9+.-]*://(\[[0-9a-fA-F:.]+\]|[^/?#@\[\]\s]+)(:[0-9]+)?$`)

// assertRefusal checks that err is a *refusal.Error of one of classes with
// a lower_snake_case Reason and an Origin of the origin form, and returns
// it (nil when it is not one).
func assertRefusal(t *testing.T, err error, classes []refusal.Class, msg string, args ...any) *refusal.Error {
	t.Helper()
	what := fmt.Sprintf(msg, args...)
	var re *refusal.Error
	if !assert.ErrorAs(t, err, &re, "%s: a refusal is a *refusal.Error", what) {
		return nil
	}
	assert.Contains(t, classes, re.Class, "%s: refusal class %s", what, re.Class)
	assert.Regexp(t, reasonWord, re.Reason, "%s: the Reason is a lower_snake_case word", what)
	if re.Origin != "" {
		assert.Regexp(t, originForm, re.Origin, "%s: the Origin is scheme://host:port, nothing more", what)
	}
	return re
}

// assertNoSecrets fails t when any rendering of err contains one of the
// secrets (each at least 4 bytes; shorter ones are skipped as too common).
func assertNoSecrets(t *testing.T, err error, secrets []string, msg string, args ...any) {
	t.Helper()
	if err == nil {
		return
	}
	renders := []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)}
	var re *refusal.Error
	if errors.As(err, &re) {
		renders = append(renders, re.Reason, re.Origin, re.Detail, re.Server)
	}
	for _, s := range secrets {
		if len(s) < 4 {
			continue
		}
		for _, r := range renders {
			if strings.Contains(r, s) {
				t.Errorf("%s: the error carries %q, which must never appear in an error: %s", fmt.Sprintf(msg, args...), s, r)
				break
			}
		}
	}
}

// urlSecrets returns the parts of a URL an error must never carry:
// userinfo, path, query and fragment.
func urlSecrets(u *url.URL) []string {
	var out []string
	if u.User != nil {
		out = append(out, u.User.Username())
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		}
	}
	if u.Path != "" && u.Path != "/" {
		out = append(out, strings.Trim(u.Path, "/"))
	}
	if u.RawQuery != "" {
		out = append(out, u.RawQuery)
		for _, vs := range u.Query() {
			out = append(out, vs...)
		}
	}
	if u.Fragment != "" {
		out = append(out, u.Fragment)
	}
	if u.Opaque != "" {
		out = append(out, u.Opaque)
	}
	return out
}

// safeCall runs fn, turning a panic into a test failure.
func safeCall(t *testing.T, what string, fn func()) (ok bool) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v", what, r)
			ok = false
		}
	}()
	fn()
	return true
}

// hammer runs workers goroutines, each calling fn n times (with its worker
// and iteration numbers); the first non-nil error fails t.
func hammer(t *testing.T, workers, n int, fn func(w, i int) error) {
	t.Helper()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for w := range workers {
		wg.Go(func() {
			for i := range n {
				if err := fn(w, i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		t.Error(first)
	}
}

// within runs fn and fails t when it has not returned after d.
func within(t *testing.T, d time.Duration, what string, fn func()) bool {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		t.Errorf("%s had not returned after %v", what, d)
		return false
	}
}
