package httptransport

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// The test binary doubles as the header helper: run with
// helperChildEnv=1 in its (explicit) environment, it performs the actions
// named by its arguments, in order, and exits before any test runs.
const helperChildEnv = "MCPWARD_HELPER_CHILD"

func init() {
	if os.Getenv(helperChildEnv) == "1" {
		os.Exit(helperChild(os.Args[1:]))
	}
}

// helperChild actions, each "name=arg":
//
//	count=PATH   append a line to PATH; n is the line count afterwards
//	pid=PATH     write the pid to PATH
//	sleep=DUR    sleep
//	stderr=TEXT  write TEXT to stderr
//	stdout=TEXT  write TEXT to stdout
//	seq=PREFIX   print {"Authorization":"PREFIX<n>"}
//	failfrom=N   exit 1 when n >= N
//	env          print {"X-Env": base64(json(os.Environ()))}
//	cwd          print {"X-Cwd": base64(cwd)}
//	big=N        print N bytes
//	exit=N       exit with N
//	holdwhile=PATH  wait while PATH exists (at most 30 s)
//	failif=PATH  exit 1 when PATH exists
func helperChild(args []string) int {
	n := 0
	for _, a := range args {
		name, arg, _ := strings.Cut(a, "=")
		switch name {
		case "count":
			f, err := os.OpenFile(arg, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err != nil {
				return 90
			}
			f.WriteString("run\n")
			f.Close()
			b, _ := os.ReadFile(arg)
			n = bytes.Count(b, []byte("\n"))
		case "pid":
			os.WriteFile(arg, []byte(strconv.Itoa(os.Getpid())), 0o600)
		case "sleep":
			d, _ := time.ParseDuration(arg)
			time.Sleep(d)
		case "stderr":
			os.Stderr.WriteString(arg)
		case "stdout":
			os.Stdout.WriteString(arg)
		case "seq":
			fmt.Fprintf(os.Stdout, `{"Authorization":%q}`, arg+strconv.Itoa(n))
		case "failfrom":
			if k, _ := strconv.Atoi(arg); n >= k {
				return 1
			}
		case "env":
			b, _ := json.Marshal(os.Environ())
			fmt.Fprintf(os.Stdout, `{"X-Env":%q}`, base64.StdEncoding.EncodeToString(b))
		case "cwd":
			wd, _ := os.Getwd()
			fmt.Fprintf(os.Stdout, `{"X-Cwd":%q}`, base64.StdEncoding.EncodeToString([]byte(wd)))
		case "big":
			k, _ := strconv.Atoi(arg)
			os.Stdout.Write(bytes.Repeat([]byte("a"), k))
		case "exit":
			k, _ := strconv.Atoi(arg)
			return k
		case "holdwhile":
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				if _, err := os.Stat(arg); err != nil {
					break
				}
			}
		case "failif":
			if _, err := os.Stat(arg); err == nil {
				return 1
			}
		default:
			return 91
		}
	}
	return 0
}

const helperCanary = "CANARY-7f3e-helper-secret"

// childArgv returns the test binary's absolute path followed by actions.
func childArgv(t *testing.T, actions ...string) []string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	require.True(t, filepath.IsAbs(exe))
	return append([]string{exe}, actions...)
}

// childEnv is the minimal explicit environment of a test helper. GORACE
// stops a -race child from sleeping a second at exit.
func childEnv(extra ...string) []string {
	return append([]string{helperChildEnv + "=1", "GORACE=atexit_sleep_ms=0"}, extra...)
}

// newChildHelper returns a HeaderHelper for argv, allowed exactly.
func newChildHelper(t *testing.T, argv []string, opts HelperOptions) *HeaderHelper {
	t.Helper()
	opts.Allowed = [][]string{argv}
	if opts.Env == nil {
		opts.Env = childEnv()
	}
	h, err := NewHeaderHelper(argv, &opts)
	require.NoError(t, err)
	return h
}

func runCount(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	require.NoError(t, err)
	return bytes.Count(b, []byte("\n"))
}

var helperReq = ports.AuthRequest{ServerID: "s", Origin: "http://127.0.0.1:1", Method: http.MethodPost}
var helperRefusal = ports.AuthRefusal{ServerID: "s", Origin: "http://127.0.0.1:1", Status: http.StatusUnauthorized}

func TestHeaderHelperConstructor(t *testing.T) {
	exe := "/usr/bin/helper"
	allowed := [][]string{{exe, "--profile", "work"}, {"/opt/other"}}
	tests := []struct {
		name      string
		argv      []string
		opts      *HelperOptions
		wantClass refusal.Class
		wantErr   string
	}{
		{name: "exact line allowed", argv: []string{exe, "--profile", "work"}},
		{name: "exact single-element line allowed", argv: []string{"/opt/other"}},
		{name: "same program different args", argv: []string{exe, "--profile", "home"}, wantClass: refusal.Refused, wantErr: ReasonHelperNotAllowed},
		{name: "extra arg", argv: []string{exe, "--profile", "work", "--x"}, wantClass: refusal.Refused, wantErr: ReasonHelperNotAllowed},
		{name: "missing arg", argv: []string{exe, "--profile"}, wantClass: refusal.Refused, wantErr: ReasonHelperNotAllowed},
		{name: "program alone not allowed", argv: []string{exe}, wantClass: refusal.Refused, wantErr: ReasonHelperNotAllowed},
		{name: "args joined differently", argv: []string{exe, "--profile work"}, wantClass: refusal.Refused, wantErr: ReasonHelperNotAllowed},
		{name: "case differs", argv: []string{exe, "--Profile", "work"}, wantClass: refusal.Refused, wantErr: ReasonHelperNotAllowed},
		{name: "nil options allow nothing", argv: []string{"/opt/other"}, opts: &HelperOptions{}, wantClass: refusal.Refused, wantErr: ReasonHelperNotAllowed},
		{name: "empty argv", argv: nil, wantClass: refusal.Config, wantErr: ReasonHelperArgvInvalid},
		{name: "relative program", argv: []string{"tokgen"}, opts: &HelperOptions{Allowed: [][]string{{"tokgen"}}}, wantClass: refusal.Config, wantErr: ReasonHelperArgvInvalid},
		{name: "dot-relative program", argv: []string{"./tokgen"}, opts: &HelperOptions{Allowed: [][]string{{"./tokgen"}}}, wantClass: refusal.Config, wantErr: ReasonHelperArgvInvalid},
		{name: "NUL in program", argv: []string{"/opt/other\x00"}, opts: &HelperOptions{Allowed: [][]string{{"/opt/other\x00"}}}, wantClass: refusal.Config, wantErr: ReasonHelperArgvInvalid},
		{name: "NUL in arg", argv: []string{exe, "a\x00b"}, opts: &HelperOptions{Allowed: [][]string{{exe, "a\x00b"}}}, wantClass: refusal.Config, wantErr: ReasonHelperArgvInvalid},
		{name: "env entry without =", argv: []string{"/opt/other"}, opts: &HelperOptions{Allowed: allowed, Env: []string{"NOEQUALS"}}, wantClass: refusal.Config, wantErr: ReasonHelperEnvInvalid},
		{name: "env empty key", argv: []string{"/opt/other"}, opts: &HelperOptions{Allowed: allowed, Env: []string{"=v"}}, wantClass: refusal.Config, wantErr: ReasonHelperEnvInvalid},
		{name: "env NUL", argv: []string{"/opt/other"}, opts: &HelperOptions{Allowed: allowed, Env: []string{"K=a\x00b"}}, wantClass: refusal.Config, wantErr: ReasonHelperEnvInvalid},
		{name: "env duplicate key", argv: []string{"/opt/other"}, opts: &HelperOptions{Allowed: allowed, Env: []string{"K=a", "K=b"}}, wantClass: refusal.Config, wantErr: ReasonHelperEnvInvalid},
		{name: "relative dir", argv: []string{"/opt/other"}, opts: &HelperOptions{Allowed: allowed, Dir: "rel"}, wantClass: refusal.Config, wantErr: ReasonHelperDirInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			if opts == nil {
				opts = &HelperOptions{Allowed: allowed, ServerID: "s"}
			}
			h, err := NewHeaderHelper(tc.argv, opts)
			if tc.wantErr == "" {
				require.NoError(t, err)
				require.NotNil(t, h)
				return
			}
			require.Nil(t, h)
			requireRefusal(t, err, tc.wantClass, tc.wantErr)
			for _, a := range tc.argv {
				assert.NotContains(t, err.Error(), a, "no argv element in the error")
			}
		})
	}
	t.Run("nil options", func(t *testing.T) {
		_, err := NewHeaderHelper([]string{exe}, nil)
		requireRefusal(t, err, refusal.Refused, ReasonHelperNotAllowed)
	})
	t.Run("allow-list is copied", func(t *testing.T) {
		argv := []string{exe, "a"}
		h, err := NewHeaderHelper(argv, &HelperOptions{Allowed: [][]string{{exe, "a"}}})
		require.NoError(t, err)
		argv[1] = "changed"
		assert.Equal(t, []string{exe, "a"}, h.argv)
	})
}

func TestHeaderHelperEnvIsExact(t *testing.T) {
	t.Setenv("MCPWARD_PLANTED_SECRET", helperCanary)
	tests := []struct {
		name string
		env  []string
	}{
		{name: "only the child switch", env: childEnv()},
		{name: "explicit extra entries", env: childEnv("FOO=bar", "EMPTY=")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newChildHelper(t, childArgv(t, "env"), HelperOptions{Env: tc.env})
			hdr, err := h.Headers(context.Background(), helperReq)
			require.NoError(t, err)
			raw, err := base64.StdEncoding.DecodeString(hdr.Get("X-Env"))
			require.NoError(t, err)
			var got []string
			require.NoError(t, json.Unmarshal(raw, &got))
			if runtime.GOOS != "windows" {
				assert.ElementsMatch(t, tc.env, got, "the child's environment is exactly Env")
			}
			assert.NotContains(t, string(raw), helperCanary, "the parent's environment is not inherited")
			assert.NotContains(t, string(raw), "MCPWARD_PLANTED_SECRET")
			assert.NotContains(t, string(raw), "PATH=")
		})
	}
}

func TestHeaderHelperDir(t *testing.T) {
	tests := []struct {
		name string
		dir  string
		want string
	}{
		{name: "explicit dir", dir: t.TempDir()},
		{name: "default is the root, not the cwd", dir: "", want: string(filepath.Separator)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == "" {
				var err error
				want, err = filepath.EvalSymlinks(tc.dir)
				require.NoError(t, err)
			}
			h := newChildHelper(t, childArgv(t, "cwd"), HelperOptions{Dir: tc.dir})
			hdr, err := h.Headers(context.Background(), helperReq)
			require.NoError(t, err)
			raw, err := base64.StdEncoding.DecodeString(hdr.Get("X-Cwd"))
			require.NoError(t, err)
			got, err := filepath.EvalSymlinks(string(raw))
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

func TestHeaderHelperRunFailures(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name      string
		actions   []string
		opts      HelperOptions
		wantClass refusal.Class
		wantErr   string
		maxTime   time.Duration
	}{
		{name: "non-zero exit with stderr and stdout", actions: []string{"stderr=" + helperCanary, "stdout={\"Authorization\":\"" + helperCanary + "\"}", "exit=3"}, wantClass: refusal.AuthRequired, wantErr: ReasonHelperFailed},
		{name: "timeout kills", actions: []string{"pid=" + filepath.Join(dir, "pid"), "stdout=" + helperCanary, "sleep=60s"}, opts: HelperOptions{Timeout: time.Second}, wantClass: refusal.Transient, wantErr: ReasonHelperTimeout, maxTime: 15 * time.Second},
		{name: "output over the cap", actions: []string{"big=1025", "sleep=60s"}, opts: HelperOptions{MaxOutput: 1024}, wantClass: refusal.AuthRequired, wantErr: ReasonHelperOutputTooLarge, maxTime: 15 * time.Second},
		{name: "output far over the cap", actions: []string{"big=10000000"}, opts: HelperOptions{MaxOutput: 1024}, wantClass: refusal.AuthRequired, wantErr: ReasonHelperOutputTooLarge, maxTime: 15 * time.Second},
		{name: "output invalid carries no output", actions: []string{"stdout=" + helperCanary}, wantClass: refusal.AuthRequired, wantErr: ReasonHelperOutputInvalid},
		{name: "empty output", actions: nil, wantClass: refusal.AuthRequired, wantErr: ReasonHelperOutputInvalid},
		{name: "empty object", actions: []string{"stdout={}"}, wantClass: refusal.AuthRequired, wantErr: ReasonHelperOutputEmpty},
		{name: "reserved header", actions: []string{`stdout={"Mcp-Session-Id":"` + helperCanary + `"}`}, wantClass: refusal.AuthRequired, wantErr: ReasonHelperReservedHeader},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			argv := childArgv(t, tc.actions...)
			opts := tc.opts
			opts.Env = childEnv("TOKEN_SEED=" + helperCanary)
			h := newChildHelper(t, argv, opts)
			start := time.Now()
			hdr, err := h.Headers(context.Background(), helperReq)
			if tc.maxTime > 0 {
				assert.Less(t, time.Since(start), tc.maxTime)
			}
			require.Nil(t, hdr)
			r := requireRefusal(t, err, tc.wantClass, tc.wantErr)
			assert.Equal(t, "s", r.Server)
			assert.Equal(t, helperReq.Origin, r.Origin)
			requireNoLeak(t, err, argv)

			// A failed run is final: no second run, same refusal.
			_, err2 := h.Headers(context.Background(), helperReq)
			requireRefusal(t, err2, tc.wantClass, tc.wantErr)
			retry, err3 := h.Refused(context.Background(), helperRefusal)
			assert.False(t, retry)
			requireRefusal(t, err3, tc.wantClass, tc.wantErr)

			if tc.wantErr == ReasonHelperTimeout && runtime.GOOS != "windows" {
				// Far past its cores, the child can be killed before it
				// wrote its pid (it is a re-executed test binary): then
				// the file never appears, and which process was killed
				// cannot be named. A child that was not killed writes it
				// within the wait, and is then found alive below.
				var b []byte
				for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
					if b, err = os.ReadFile(filepath.Join(dir, "pid")); err == nil && len(b) > 0 {
						break
					}
				}
				if len(b) == 0 {
					t.Log("the helper was killed before it wrote its pid; its end is not checked by pid")
					return
				}
				pid, err := strconv.Atoi(string(b))
				require.NoError(t, err)
				p, err := os.FindProcess(pid)
				if err == nil {
					assert.Error(t, p.Signal(syscall.Signal(0)), "the timed-out helper is gone")
				}
			}
		})
	}
}

// requireNoLeak asserts err's text holds no canary and no argv element
// beyond the program.
func requireNoLeak(t *testing.T, err error, argv []string) {
	t.Helper()
	s := err.Error()
	assert.NotContains(t, s, helperCanary)
	assert.NotContains(t, s, argv[0])
	for _, a := range argv[1:] {
		assert.NotContains(t, s, a)
	}
	var r *refusal.Error
	require.True(t, errors.As(err, &r))
	assert.NotContains(t, fmt.Sprintf("%+v", *r), helperCanary)
}

func TestHeaderHelperStartFailed(t *testing.T) {
	argv := []string{filepath.Join(t.TempDir(), "missing-"+helperCanary)}
	h, err := NewHeaderHelper(argv, &HelperOptions{Allowed: [][]string{argv}})
	require.NoError(t, err)
	_, err = h.Headers(context.Background(), helperReq)
	requireRefusal(t, err, refusal.AuthRequired, ReasonHelperStartFailed)
	requireNoLeak(t, err, argv)
}

func TestHeaderHelperStrictParse(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    http.Header
		wantErr string
	}{
		{name: "one header", out: `{"Authorization":"Bearer t"}`, want: http.Header{"Authorization": {"Bearer t"}}},
		{name: "two headers, canonicalised, surrounding whitespace", out: " \n{\"x-api-key\":\"k\", \"authorization\":\"Bearer t\"}\n", want: http.Header{"X-Api-Key": {"k"}, "Authorization": {"Bearer t"}}},
		{name: "escaped value", out: `{"X-A":"a\"b\u00e9"}`, want: http.Header{"X-A": {"a\"bé"}}},
		{name: "tab in value", out: `{"X-A":"a\tb"}`, want: http.Header{"X-A": {"a\tb"}}},
		{name: "empty object", out: `{}`, wantErr: ReasonHelperOutputEmpty},
		{name: "empty output", out: ``, wantErr: ReasonHelperOutputInvalid},
		{name: "whitespace only", out: " \n", wantErr: ReasonHelperOutputInvalid},
		{name: "array", out: `[{"A":"b"}]`, wantErr: ReasonHelperOutputInvalid},
		{name: "string", out: `"A"`, wantErr: ReasonHelperOutputInvalid},
		{name: "null", out: `null`, wantErr: ReasonHelperOutputInvalid},
		{name: "duplicate key", out: `{"X-A":"1","X-A":"2"}`, wantErr: ReasonHelperOutputInvalid},
		{name: "duplicate key case variant", out: `{"Authorization":"1","authorization":"2"}`, wantErr: ReasonHelperOutputInvalid},
		{name: "duplicate key upper case variant", out: `{"x-api-key":"1","X-API-KEY":"2"}`, wantErr: ReasonHelperOutputInvalid},
		{name: "duplicate key via escape", out: `{"X-A":"1","X-\u0041":"2"}`, wantErr: ReasonHelperOutputInvalid},
		{name: "number value", out: `{"X-A":1}`, wantErr: ReasonHelperOutputInvalid},
		{name: "bool value", out: `{"X-A":true}`, wantErr: ReasonHelperOutputInvalid},
		{name: "null value", out: `{"X-A":null}`, wantErr: ReasonHelperOutputInvalid},
		{name: "object value", out: `{"X-A":{"b":"c"}}`, wantErr: ReasonHelperOutputInvalid},
		{name: "array value", out: `{"X-A":["b"]}`, wantErr: ReasonHelperOutputInvalid},
		{name: "empty value", out: `{"X-A":""}`, wantErr: ReasonHelperOutputInvalid},
		{name: "trailing object", out: `{"X-A":"b"}{"X-B":"c"}`, wantErr: ReasonHelperOutputInvalid},
		{name: "trailing garbage", out: `{"X-A":"b"} x`, wantErr: ReasonHelperOutputInvalid},
		{name: "trailing comma", out: `{"X-A":"b",}`, wantErr: ReasonHelperOutputInvalid},
		{name: "missing comma", out: `{"X-A":"b" "X-B":"c"}`, wantErr: ReasonHelperOutputInvalid},
		{name: "unterminated", out: `{"X-A":"b"`, wantErr: ReasonHelperOutputInvalid},
		{name: "invalid UTF-8", out: "{\"X-A\":\"\xff\"}", wantErr: ReasonHelperOutputInvalid},
		{name: "BOM", out: "\uFEFF{\"X-A\":\"b\"}", wantErr: ReasonHelperOutputInvalid},
		{name: "CRLF in value", out: `{"X-A":"b\r\nX-Injected: c"}`, wantErr: ReasonHelperOutputInvalid},
		{name: "LF in value", out: `{"X-A":"b\nc"}`, wantErr: ReasonHelperOutputInvalid},
		{name: "NUL in value", out: `{"X-A":"b\u0000"}`, wantErr: ReasonHelperOutputInvalid},
		{name: "CR in name", out: `{"X-A\r":"b"}`, wantErr: ReasonHelperOutputInvalid},
		{name: "space in name", out: `{"X A":"b"}`, wantErr: ReasonHelperOutputInvalid},
		{name: "colon in name", out: `{"X-A:":"b"}`, wantErr: ReasonHelperOutputInvalid},
		{name: "empty name", out: `{"":"b"}`, wantErr: ReasonHelperOutputInvalid},
		{name: "reserved Mcp-Session-Id", out: `{"Mcp-Session-Id":"x"}`, wantErr: ReasonHelperReservedHeader},
		{name: "reserved mcp-protocol-version lower case", out: `{"mcp-protocol-version":"x"}`, wantErr: ReasonHelperReservedHeader},
		{name: "reserved Content-Type", out: `{"Content-Type":"text/plain"}`, wantErr: ReasonHelperReservedHeader},
		{name: "reserved traceparent", out: `{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`, wantErr: ReasonHelperReservedHeader},
		{name: "reserved Host", out: `{"Host":"evil.example"}`, wantErr: ReasonHelperReservedHeader},
		{name: "reserved after a valid one", out: `{"Authorization":"t","HOST":"evil.example"}`, wantErr: ReasonHelperReservedHeader},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, reason := parseHelperOutput([]byte(tc.out))
			assert.Equal(t, tc.wantErr, reason)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestHeaderHelperCachesOneRun(t *testing.T) {
	count := filepath.Join(t.TempDir(), "count")
	h := newChildHelper(t, childArgv(t, "count="+count, "sleep=200ms", "seq=Bearer t"), HelperOptions{})

	// Concurrent first callers share one run.
	var wg sync.WaitGroup
	got := make([]http.Header, 8)
	errs := make([]error, 8)
	for i := range got {
		wg.Go(func() { got[i], errs[i] = h.Headers(context.Background(), helperReq) })
	}
	wg.Wait()
	for i := range got {
		require.NoError(t, errs[i])
		assert.Equal(t, "Bearer t1", got[i].Get("Authorization"))
	}
	for range 20 {
		hdr, err := h.Headers(context.Background(), helperReq)
		require.NoError(t, err)
		require.Equal(t, "Bearer t1", hdr.Get("Authorization"))
	}
	assert.Equal(t, 1, runCount(t, count), "one run for every Headers call")

	// Callers get clones: changing one does not change the cache.
	hdr, err := h.Headers(context.Background(), helperReq)
	require.NoError(t, err)
	hdr.Set("Authorization", "tampered")
	hdr.Set("X-Other", "x")
	hdr, err = h.Headers(context.Background(), helperReq)
	require.NoError(t, err)
	assert.Equal(t, http.Header{"Authorization": {"Bearer t1"}}, hdr)
}

func TestHeaderHelperRefusedCoalesces(t *testing.T) {
	count := filepath.Join(t.TempDir(), "count")
	h := newChildHelper(t, childArgv(t, "count="+count, "sleep=300ms", "seq=Bearer t"), HelperOptions{})
	ctx := context.Background()
	_, err := h.Headers(ctx, helperReq)
	require.NoError(t, err)
	require.Equal(t, 1, runCount(t, count))

	// Eight requests refused together: exactly one re-run.
	const n = 8
	start := make(chan struct{})
	var wg sync.WaitGroup
	retries := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			retries[i], errs[i] = h.Refused(ctx, helperRefusal)
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		assert.True(t, retries[i])
	}
	assert.Equal(t, 2, runCount(t, count), "one re-run for the whole burst")

	// A late refusal of the replaced credential, before anyone got the
	// fresh one, runs nothing.
	retry, err := h.Refused(ctx, helperRefusal)
	require.NoError(t, err)
	assert.True(t, retry)
	assert.Equal(t, 2, runCount(t, count))

	hdr, err := h.Headers(ctx, helperReq)
	require.NoError(t, err)
	assert.Equal(t, "Bearer t2", hdr.Get("Authorization"))

	// A refusal of the handed-out fresh credential runs the helper once more.
	retry, err = h.Refused(ctx, helperRefusal)
	require.NoError(t, err)
	assert.True(t, retry)
	assert.Equal(t, 3, runCount(t, count))
	hdr, err = h.Headers(ctx, helperReq)
	require.NoError(t, err)
	assert.Equal(t, "Bearer t3", hdr.Get("Authorization"))
}

func TestHeaderHelperFailedRerun(t *testing.T) {
	count := filepath.Join(t.TempDir(), "count")
	argv := childArgv(t, "count="+count, "stderr="+helperCanary, "failfrom=2", "seq="+helperCanary)
	h := newChildHelper(t, argv, HelperOptions{})
	ctx := context.Background()
	_, err := h.Headers(ctx, helperReq)
	require.NoError(t, err)

	const n = 4
	var wg sync.WaitGroup
	retries := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { retries[i], errs[i] = h.Refused(ctx, helperRefusal) })
	}
	wg.Wait()
	for i := range n {
		assert.False(t, retries[i])
		requireRefusal(t, errs[i], refusal.AuthRequired, ReasonHelperFailed)
		requireNoLeak(t, errs[i], argv)
	}
	assert.Equal(t, 2, runCount(t, count), "a failed re-run is not repeated")
	_, err = h.Headers(ctx, helperReq)
	requireRefusal(t, err, refusal.AuthRequired, ReasonHelperFailed)
	assert.Equal(t, 2, runCount(t, count))
}

func TestHeaderHelperCanceledCallerDoesNotPoison(t *testing.T) {
	count := filepath.Join(t.TempDir(), "count")
	h := newChildHelper(t, childArgv(t, "count="+count, "sleep=300ms", "seq=Bearer t"), HelperOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := h.Headers(ctx, helperReq)
	requireRefusal(t, err, refusal.Transient, ReasonHelperCanceled)

	hdr, err := h.Headers(context.Background(), helperReq)
	require.NoError(t, err)
	assert.Equal(t, "Bearer t1", hdr.Get("Authorization"))
	assert.Equal(t, 1, runCount(t, count), "the canceled caller's run served the next caller")
}

func TestHeaderHelperServerMismatch(t *testing.T) {
	count := filepath.Join(t.TempDir(), "count")
	h := newChildHelper(t, childArgv(t, "count="+count, "seq=Bearer t"), HelperOptions{ServerID: "s"})
	other := helperReq
	other.ServerID = "other"
	_, err := h.Headers(context.Background(), other)
	requireRefusal(t, err, refusal.AuthRequired, ReasonHelperServerMismatch)
	otherRefusal := helperRefusal
	otherRefusal.ServerID = "other"
	retry, err := h.Refused(context.Background(), otherRefusal)
	assert.False(t, retry)
	requireRefusal(t, err, refusal.AuthRequired, ReasonHelperServerMismatch)
	assert.Equal(t, 0, runCount(t, count), "nothing runs for another server")
}

func TestHeaderHelperThroughTransport(t *testing.T) {
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	tests := []struct {
		name     string
		accept   string
		actions  func(count string) []string
		wantReqs []string // Authorization of each request the server saw
		wantErr  string
		wantRuns int
	}{
		{
			name:     "header arrives",
			accept:   "Bearer t1",
			actions:  func(c string) []string { return []string{"count=" + c, "seq=Bearer t"} },
			wantReqs: []string{"Bearer t1", "Bearer t1"},
			wantRuns: 1,
		},
		{
			name:     "refused then fresh headers",
			accept:   "Bearer t2",
			actions:  func(c string) []string { return []string{"count=" + c, "seq=Bearer t"} },
			wantReqs: []string{"Bearer t1", "Bearer t2", "Bearer t2"},
			wantRuns: 2,
		},
		{
			name:   "re-run fails: auth refused, nothing leaks",
			accept: "Bearer t2",
			actions: func(c string) []string {
				return []string{"count=" + c, "stderr=" + helperCanary, "failfrom=2", "seq=Bearer t"}
			},
			wantReqs: []string{"Bearer t1"},
			wantErr:  ReasonAuthRefused,
			wantRuns: 2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := authServer(t, tc.accept)
			count := filepath.Join(t.TempDir(), "count")
			h := newChildHelper(t, childArgv(t, tc.actions(count)...), HelperOptions{ServerID: "s"})
			tr, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("s", srv.URL+"/mcp", map[string]string{"Authorization": "static"}), h)
			require.NoError(t, err)
			closeIdle(t, tr)

			for range 2 {
				resp, err := post(context.Background(), tr, body)
				if tc.wantErr != "" {
					requireRefusal(t, err, refusal.AuthRefused, tc.wantErr)
					assert.NotContains(t, err.Error(), helperCanary)
					assert.NotContains(t, err.Error(), "Bearer")
					break
				}
				require.NoError(t, err)
				resp.Body.Close()
				assert.Equal(t, http.StatusOK, resp.StatusCode)
			}
			var seen []string
			for _, r := range srv.requests() {
				seen = append(seen, r.Header.Get("Authorization"))
			}
			assert.Equal(t, tc.wantReqs, seen, "the helper's header overrides the static one on every request")
			assert.Equal(t, tc.wantRuns, runCount(t, count))
		})
	}
}
