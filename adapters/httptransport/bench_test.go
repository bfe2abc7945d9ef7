//go:build linux || darwin

package httptransport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// The benchmarks compare, on the same in-process go-sdk server and in the
// same run, the raw go-sdk client transport (a StreamableClientTransport
// with a plain http.Client) with mcpward's admitted transport, built by a
// Factory with the real default egress policy (it admits http to a
// loopback literal) and, for the variants, a static header or an
// authenticator. Every side connects with the same client, pinned to
// protocol 2025-11-25.

// closableTransport is a transport whose idle connections can be let go
// of: mcpward's *Transport, or the raw SDK's (rawTr).
type closableTransport interface {
	mcp.Transport
	CloseIdleConnections()
}

// rawTr is the raw go-sdk transport as a closableTransport.
type rawTr struct{ *mcp.StreamableClientTransport }

func (r rawTr) CloseIdleConnections() { r.HTTPClient.CloseIdleConnections() }

// benchSide is one way of connecting: setup runs once per sub-benchmark
// run and returns the maker of a fresh transport for one connection to url.
type benchSide struct {
	name  string
	setup func() func(b *testing.B, url string) closableTransport
}

func benchSides() []benchSide {
	f := New(egress.Default(), safeOptions())
	admitted := func(headers map[string]string, withAuth bool) func() func(*testing.B, string) closableTransport {
		return func() func(*testing.B, string) closableTransport {
			// The fake records every request it is asked about, so each
			// run gets its own: a shared one would grow through the runs.
			var a ports.Authenticator
			if withAuth {
				a = portstest.NewAuthenticator(http.Header{"Authorization": {"Bearer bench-token"}}, 0)
			}
			return func(b *testing.B, url string) closableTransport {
				tr, err := f.Transport(context.Background(), httpTarget("bench", url, headers), a)
				if err != nil {
					b.Fatal("transport refused")
				}
				return tr
			}
		}
	}
	return []benchSide{
		{name: "raw", setup: func() func(*testing.B, string) closableTransport {
			return func(_ *testing.B, url string) closableTransport {
				return rawTr{&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{}}}
			}
		}},
		{name: "raw+header", setup: func() func(*testing.B, string) closableTransport {
			return func(_ *testing.B, url string) closableTransport {
				return rawTr{&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: headerRT{}}}}
			}
		}},
		{name: "mcpward", setup: admitted(nil, false)},
		{name: "mcpward+static", setup: admitted(map[string]string{"Authorization": "Bearer bench-token"}, false)},
		{name: "mcpward+auth", setup: admitted(nil, true)},
	}
}

// headerRT is how a host would add the header of the +static and +auth
// sides to the raw client: set on a clone of each request. It separates
// the cost of one more header on the wire (the in-process server parses it
// too) from mcpward's cost of adding it.
type headerRT struct{}

func (headerRT) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.Header.Set("Authorization", "Bearer bench-token")
	return http.DefaultTransport.RoundTrip(out)
}

func (headerRT) CloseIdleConnections() {
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
}

// benchServer serves the test MCP server (tools echo and block) on a
// loopback httptest server, closed at cleanup. jsonResponse selects
// application/json answers instead of SSE streams.
func benchServer(b *testing.B, jsonResponse bool) string {
	srv := httptest.NewServer(mcpHandler(newMCPServer(), &mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}))
	b.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

var benchClient = mcp.NewClient(&mcp.Implementation{Name: "mcpward-bench", Version: "0"}, &mcp.ClientOptions{
	Capabilities:   &mcp.ClientCapabilities{},
	MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
})

func benchConnect(b *testing.B, tr mcp.Transport) *mcp.ClientSession {
	cs, err := benchClient.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal("connect failed")
	}
	return cs
}

// processCPU is the user+system CPU time of the whole process (client,
// server and runtime alike) so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal("getrusage failed")
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHTTPCallEcho is one tools/call of the echo tool over an
// established session, answered as an SSE stream (the go-sdk server's
// default) or as a JSON body (which mcpward reads under the receive cap).
// Besides ns/op it reports the median call (p50-ns) and the process CPU
// time per call (cpu-ns/op; it includes the in-process server's share,
// which is the same on every side). The raw-vs-* runs alternate calls on a
// raw and an mcpward session (see paired).
func BenchmarkHTTPCallEcho(b *testing.B) {
	for _, mode := range []struct {
		name string
		json bool
	}{{"sse", false}, {"json", true}} {
		b.Run(mode.name, func(b *testing.B) {
			url := benchServer(b, mode.json)
			for _, side := range benchSides() {
				b.Run(side.name, func(b *testing.B) {
					tr := side.setup()(b, url)
					cs := benchConnect(b, tr)
					defer tr.CloseIdleConnections()
					defer cs.Close()
					ctx := context.Background()
					params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"msg": "hello"}}
					durs := make([]time.Duration, b.N)
					b.ReportAllocs()
					cpu0 := processCPU(b)
					b.ResetTimer()
					for i := range b.N {
						t0 := time.Now()
						res, err := cs.CallTool(ctx, params)
						durs[i] = time.Since(t0)
						if err != nil || res.IsError {
							b.Fatal("echo failed")
						}
					}
					b.StopTimer()
					cpu := processCPU(b) - cpu0
					slices.Sort(durs)
					b.ReportMetric(float64(durs[len(durs)/2]), "p50-ns")
					b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
				})
			}
			sides := benchSides()
			for _, side := range sides[2:] {
				b.Run("raw-vs-"+side.name, func(b *testing.B) {
					rawTr, wardTr := sides[0].setup()(b, url), side.setup()(b, url)
					rawCS, wardCS := benchConnect(b, rawTr), benchConnect(b, wardTr)
					defer wardTr.CloseIdleConnections()
					defer rawTr.CloseIdleConnections()
					defer wardCS.Close()
					defer rawCS.Close()
					ctx := context.Background()
					params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"msg": "hello"}}
					call := func(cs *mcp.ClientSession) time.Duration {
						t0 := time.Now()
						res, err := cs.CallTool(ctx, params)
						d := time.Since(t0)
						if err != nil || res.IsError {
							b.Fatal("echo failed")
						}
						return d
					}
					paired(b, 16, func() time.Duration { return call(rawCS) }, func() time.Duration { return call(wardCS) })
				})
			}
		})
	}
}

// paired runs raw and ward b.N times each, alternating blocks of block
// ops and swapping which side goes first every block pair, so that load
// from other processes falls on both sides alike, which separate
// sub-benchmarks, run seconds apart, cannot promise on a shared machine.
// It reports the median op of each side (raw-p50-ns, ward-p50-ns), their
// ratio (p50-ratio) and difference (p50-delta-ns), the ratio of the total
// times (sum-ratio), and the process CPU time per op of each side
// (raw-cpu-ns/op, ward-cpu-ns/op) and their ratio (cpu-ratio), the CPU
// being read at block boundaries. ns/op is the time of one op on each side.
func paired(b *testing.B, block int, raw, ward func() time.Duration) {
	rd, wd := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	var rcpu, wcpu time.Duration
	run := func(f func() time.Duration, durs *[]time.Duration, cpu *time.Duration, n int) {
		c0 := processCPU(b)
		for range n {
			*durs = append(*durs, f())
		}
		*cpu += processCPU(b) - c0
	}
	b.ResetTimer()
	for i := 0; len(rd) < b.N; i++ {
		n := min(block, b.N-len(rd))
		if i%2 == 0 {
			run(raw, &rd, &rcpu, n)
			run(ward, &wd, &wcpu, n)
		} else {
			run(ward, &wd, &wcpu, n)
			run(raw, &rd, &rcpu, n)
		}
	}
	b.StopTimer()
	var rs, ws time.Duration
	for i := range b.N {
		rs += rd[i]
		ws += wd[i]
	}
	slices.Sort(rd)
	slices.Sort(wd)
	r50, w50 := rd[len(rd)/2], wd[len(wd)/2]
	b.ReportMetric(float64(r50), "raw-p50-ns")
	b.ReportMetric(float64(w50), "ward-p50-ns")
	b.ReportMetric(float64(w50)/float64(r50), "p50-ratio")
	b.ReportMetric(float64(w50-r50), "p50-delta-ns")
	b.ReportMetric(float64(ws)/float64(rs), "sum-ratio")
	b.ReportMetric(float64(rcpu)/float64(b.N), "raw-cpu-ns/op")
	b.ReportMetric(float64(wcpu)/float64(b.N), "ward-cpu-ns/op")
	b.ReportMetric(float64(wcpu)/float64(rcpu), "cpu-ratio")
}

// BenchmarkHTTPConnect is, per op, building the transport (admission
// included, for mcpward), connecting (initialize, notifications/
// initialized, the standalone GET stream), closing the session (DELETE)
// and releasing the pooled connections with CloseIdleConnections, done the
// same way on every side, so each op dials afresh. The raw-vs-* runs
// alternate the two sides (see paired).
func BenchmarkHTTPConnect(b *testing.B) {
	url := benchServer(b, false)
	for _, side := range benchSides() {
		b.Run(side.name, func(b *testing.B) {
			mk := side.setup()
			b.ReportAllocs()
			for b.Loop() {
				tr := mk(b, url)
				cs := benchConnect(b, tr)
				if err := cs.Close(); err != nil {
					b.Fatal("close failed")
				}
				tr.CloseIdleConnections()
			}
		})
	}
	sides := benchSides()
	for _, side := range sides[2:] {
		b.Run("raw-vs-"+side.name, func(b *testing.B) {
			mkRaw, mkWard := sides[0].setup(), side.setup()
			cycle := func(mk func(*testing.B, string) closableTransport) time.Duration {
				t0 := time.Now()
				tr := mk(b, url)
				cs := benchConnect(b, tr)
				if err := cs.Close(); err != nil {
					b.Fatal("close failed")
				}
				tr.CloseIdleConnections()
				return time.Since(t0)
			}
			paired(b, 4, func() time.Duration { return cycle(mkRaw) }, func() time.Duration { return cycle(mkWard) })
		})
	}
}

// The tests below pin the fast paths the benchmarks led to (roundtrip.go:
// sameOrigin, mediaType, readAtMost, bufferedBody): each must answer
// exactly what the slow form it short-cuts answers.

// readAllLimited is the reference readAtMost replaces.
func readAllLimited(r io.Reader, limit int64) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, limit))
}

// chunkReader returns data in pieces of at most n bytes, an empty read
// with a nil error between pieces, then err (io.EOF when nil).
type chunkReader struct {
	data  []byte
	n     int
	err   error
	empty bool
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if r.empty = !r.empty; r.empty {
		return 0, nil
	}
	if len(r.data) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		return 0, io.EOF
	}
	k := min(len(p), r.n, len(r.data))
	copy(p, r.data[:k])
	r.data = r.data[k:]
	return k, nil
}

func TestReadAtMost(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), (presizeLimit+4096)/16)
	failure := errors.New("read failed")
	tests := []struct {
		name  string
		size  int
		limit int64
		hint  int64
		chunk int
		err   error
	}{
		{name: "empty, no hint", size: 0, limit: 100, hint: -1, chunk: 7},
		{name: "empty, hint 0", size: 0, limit: 100, hint: 0, chunk: 7},
		{name: "at the limit", size: 100, limit: 100, hint: -1, chunk: 7},
		{name: "at the limit, exact hint", size: 100, limit: 100, hint: 100, chunk: 100},
		{name: "one over the limit", size: 101, limit: 100, hint: -1, chunk: 7},
		{name: "far over the limit, hint over", size: 5000, limit: 100, hint: 5000, chunk: 512},
		{name: "hint smaller than body", size: 3000, limit: 1 << 20, hint: 10, chunk: 999},
		{name: "hint larger than body", size: 10, limit: 1 << 20, hint: 4000, chunk: 3},
		{name: "511 bytes, no hint", size: 511, limit: 1 << 20, hint: -1, chunk: 511},
		{name: "512 bytes, no hint", size: 512, limit: 1 << 20, hint: -1, chunk: 512},
		{name: "513 bytes, no hint", size: 513, limit: 1 << 20, hint: -1, chunk: 4096},
		{name: "presize limit - 1, exact hint", size: presizeLimit - 1, limit: 1 << 20, hint: presizeLimit - 1, chunk: 4096},
		{name: "presize limit, exact hint", size: presizeLimit, limit: 1 << 20, hint: presizeLimit, chunk: 4096},
		{name: "presize limit + 1, exact hint", size: presizeLimit + 1, limit: 1 << 20, hint: presizeLimit + 1, chunk: 4096},
		{name: "error mid-body keeps what was read", size: 300, limit: 1 << 20, hint: 1000, chunk: 64, err: failure},
		{name: "limit 1", size: 5, limit: 1, hint: -1, chunk: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := data[:tc.size]
			got, gotErr := readAtMost(&chunkReader{data: body, n: tc.chunk, err: tc.err}, tc.limit, tc.hint)
			want, wantErr := readAllLimited(&chunkReader{data: body, n: tc.chunk, err: tc.err}, tc.limit)
			require.Equal(t, want, got)
			require.Equal(t, wantErr, gotErr)
			if tc.err != nil {
				require.ErrorIs(t, gotErr, tc.err)
			}
		})
	}
}

func TestReadAtMostFirstBufferBounded(t *testing.T) {
	// A Content-Length announcing up to the cap, followed by no body, must
	// not make readAtMost allocate the cap.
	for _, hint := range []int64{presizeLimit + 1, DefaultReceiveCap - 1, DefaultReceiveCap, 1 << 40} {
		buf, err := readAtMost(bytes.NewReader(nil), DefaultReceiveCap+1, hint)
		require.NoError(t, err)
		require.Empty(t, buf)
		require.LessOrEqual(t, cap(buf), presizeLimit, "hint %d", hint)
	}
	// An exact small hint reads the body with one allocation.
	body := bytes.Repeat([]byte("z"), 3000)
	allocs := testing.AllocsPerRun(50, func() {
		if b, _ := readAtMost(bytes.NewReader(body), 1<<20, int64(len(body))); len(b) != len(body) {
			t.Fatal("short read")
		}
	})
	require.LessOrEqual(t, allocs, 2.0) // the buffer, and the bytes.Reader's escape at most
}

func FuzzReadAtMost(f *testing.F) {
	f.Add([]byte("hello"), int64(3), int64(-1), uint8(2))
	f.Add([]byte("hello"), int64(5), int64(5), uint8(5))
	f.Add([]byte("hello"), int64(6), int64(100), uint8(1))
	f.Add([]byte{}, int64(1), int64(0), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, limit, hint int64, chunk uint8) {
		if limit < 1 || limit > 1<<20 {
			t.Skip()
		}
		n := int(chunk) + 1
		got, gotErr := readAtMost(&chunkReader{data: data, n: n}, limit, hint)
		want, wantErr := readAllLimited(&chunkReader{data: data, n: n}, limit)
		if !bytes.Equal(got, want) || gotErr != wantErr {
			t.Fatalf("readAtMost(len %d, limit %d, hint %d) = (len %d, %v), want (len %d, %v)", len(data), limit, hint, len(got), gotErr, len(want), wantErr)
		}
		if int64(cap(got)) > max(presizeLimit, 2*limit+1) {
			t.Fatalf("buffer capacity %d for limit %d", cap(got), limit)
		}
		// The same read into a reused buffer (capBody's from bodyPool),
		// its old bytes garbage: the same answer.
		old := bytes.Repeat([]byte{0xAA}, int(chunk)*37)
		got, gotErr = readAtMostInto(old[:0], &chunkReader{data: data, n: n}, limit, hint)
		if !bytes.Equal(got, want) || gotErr != wantErr {
			t.Fatalf("readAtMostInto(cap %d, len %d, limit %d, hint %d) = (len %d, %v), want (len %d, %v)", len(old), len(data), limit, hint, len(got), gotErr, len(want), wantErr)
		}
	})
}

func TestBufferedBody(t *testing.T) {
	b := newBufferedBody([]byte("abc"))
	got, err := io.ReadAll(b)
	require.NoError(t, err)
	require.Equal(t, "abc", string(got))
	require.NoError(t, b.Close())
	n, err := b.Read(make([]byte, 1))
	require.Zero(t, n)
	require.Equal(t, io.EOF, err)
}

// sameOriginRT builds the round tripper fields Transport sets from the
// admitted URL.
func sameOriginRT(t testing.TB, admitted string) *roundTripper {
	u, err := url.Parse(admitted)
	if err != nil {
		t.Skip()
	}
	return &roundTripper{origin: originOf(u), urlScheme: u.Scheme, urlHost: u.Host}
}

func TestSameOrigin(t *testing.T) {
	const adm = "http://127.0.0.1:8080/mcp"
	tests := []struct {
		name     string
		admitted string
		req      string
		want     bool
	}{
		{name: "identical (fast path)", admitted: adm, req: "http://127.0.0.1:8080/other?q=1", want: true},
		{name: "scheme in upper case", admitted: adm, req: "HTTP://127.0.0.1:8080/mcp", want: true},
		{name: "other scheme", admitted: adm, req: "https://127.0.0.1:8080/mcp", want: false},
		{name: "other port", admitted: adm, req: "http://127.0.0.1:8081/mcp", want: false},
		{name: "other host", admitted: adm, req: "http://127.0.0.2:8080/mcp", want: false},
		{name: "default port written", admitted: "http://localhost/mcp", req: "http://localhost:80/mcp", want: true},
		{name: "default port omitted", admitted: "https://example.com:443/mcp", req: "https://example.com/mcp", want: true},
		{name: "host in other case", admitted: "http://Example.COM:9/", req: "http://example.com:9/", want: true},
		{name: "same host string, other scheme", admitted: "http://example.com/", req: "https://example.com/", want: false},
		{name: "ipv6", admitted: "http://[::1]:9/", req: "http://[::1]:9/x", want: true},
		{name: "ipv6 other", admitted: "http://[::1]:9/", req: "http://[::2]:9/x", want: false},
		{name: "empty host", admitted: adm, req: "http:///mcp", want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := sameOriginRT(t, tc.admitted)
			ru, err := url.Parse(tc.req)
			require.NoError(t, err)
			require.Equal(t, tc.want, rt.sameOrigin(ru))
			require.Equal(t, originOf(ru) == rt.origin, rt.sameOrigin(ru), "agrees with originOf")
		})
	}
}

func FuzzSameOrigin(f *testing.F) {
	f.Add("http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/x")
	f.Add("http://127.0.0.1:8080/mcp", "HTTP://127.0.0.1:8080/x")
	f.Add("http://h/", "http://h:80/")
	f.Add("https://[::1]:443/", "https://[::1]/")
	f.Add("http://a.b:1/", "http://a.b:01/")
	f.Fuzz(func(t *testing.T, admitted, req string) {
		rt := sameOriginRT(t, admitted)
		ru, err := url.Parse(req)
		if err != nil {
			t.Skip()
		}
		if got, want := rt.sameOrigin(ru), originOf(ru) == rt.origin; got != want {
			t.Fatalf("sameOrigin(%q) for %q = %v, originOf says %v", req, admitted, got, want)
		}
	})
}

// mediaTypeRef is the reference mediaType short-cuts.
func mediaTypeRef(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	return mt
}

func TestMediaType(t *testing.T) {
	for _, ct := range []string{
		"text/event-stream", "application/json", "", "TEXT/EVENT-STREAM", "Application/JSON",
		"text/event-stream; charset=utf-8", "application/json;charset=utf-8", " application/json",
		"application/json ", "text/event-stream;", "application/json; x", "text/html", "application/json\x00",
	} {
		resp := &http.Response{Header: http.Header{"Content-Type": {ct}}}
		require.Equal(t, mediaTypeRef(ct), mediaType(resp), "%q", ct)
	}
	require.Empty(t, mediaType(&http.Response{Header: http.Header{}}))
}

func FuzzMediaType(f *testing.F) {
	for _, s := range []string{"text/event-stream", "application/json", "application/json; a=b", "TEXT/event-stream"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ct string) {
		resp := &http.Response{Header: http.Header{"Content-Type": {ct}}}
		if got, want := mediaType(resp), mediaTypeRef(ct); got != want {
			t.Fatalf("mediaType(%q) = %q, want %q", ct, got, want)
		}
	})
}

// TestReceiveCapBoundary sends JSON bodies of exactly the cap and one byte
// over it, with and without a Content-Length, through the transport: the
// first arrives intact, the second is refused.
func TestReceiveCapBoundary(t *testing.T) {
	const capBytes = 70 << 10 // above presizeLimit, so the buffer must grow
	for _, declare := range []bool{true, false} {
		for _, size := range []int{capBytes, capBytes + 1, 600, 0} {
			t.Run(fmt.Sprintf("declared=%v/size=%d", declare, size), func(t *testing.T) {
				body := bytes.Repeat([]byte("q"), size)
				srv := newTestServer(t, false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					if declare {
						w.Header().Set("Content-Length", strconv.Itoa(size))
					}
					w.WriteHeader(http.StatusOK)
					if !declare {
						w.(http.Flusher).Flush() // no Content-Length: chunked
					}
					w.Write(body)
				}))
				tr, err := New(egress.Default(), &Options{Resolver: &mapResolver{}, ReceiveCap: capBytes}).
					Transport(context.Background(), httpTarget("s", srv.URL, nil), nil)
				require.NoError(t, err)
				closeIdle(t, tr)
				resp, err := post(context.Background(), tr, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
				if size > capBytes {
					requireRefusal(t, err, refusal.Protocol, ReasonReceiveCap)
					return
				}
				require.NoError(t, err)
				defer resp.Body.Close()
				require.EqualValues(t, size, resp.ContentLength)
				got, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				require.Equal(t, body, got)
			})
		}
	}
}
