// Package harness runs the peer benchmark: it builds the server and one
// client program per client kind, starts the Streamable HTTP servers on
// loopback, runs every client kind in its own process over every
// transport and protocol era for a number of interleaved rounds, reads
// each process's figures back as JSON and reports medians and ratios to
// the raw go-sdk client of the same era as markdown.
package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpward/mcpward/bench/internal/clientkit"
	"github.com/mcpward/mcpward/bench/internal/fixture"
)

// Kinds are the client kinds, the baseline first.
var Kinds = []string{"go-sdk", "mcp-go", "mcpward"}

// Transports are the transports every kind runs over.
var Transports = []string{"stdio", "http"}

// Eras are the protocol eras measured, legacy first (fixture.Eras).
var Eras = fixture.Eras

// speaks reports whether kind is measured in era: mcp-go only in the
// legacy one.
func speaks(kind, era string) bool { return era == "legacy" || kind != "mcp-go" }

// programs maps a kind to its client program's package (under cmd/).
var programs = map[string]string{"go-sdk": "client-gosdk", "mcp-go": "client-mcpgo", "mcpward": "client-mcpward"}

const modulePath = "github.com/mcpward/mcpward/bench/cmd/"

// Build builds the server and the client programs into dir with one go
// command (from the bench module, or a workspace holding it).
func Build(ctx context.Context, dir string) error {
	args := []string{"build", "-ldflags=-w", "-o", dir + string(filepath.Separator), modulePath + "benchserver"}
	for _, k := range Kinds {
		args = append(args, modulePath+programs[k])
	}
	if out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, out)
	}
	return nil
}

// Config is one run. Zero fields take the defaults of Defaults.
type Config struct {
	// Dir holds what Build built; client processes run in it.
	Dir string
	// Rounds is how many interleaved rounds of every kind × transport run.
	Rounds int
	// Calls, Connects and ConcCalls are the client programs' -calls,
	// -connects and -conc-calls; Tools is the full server's tool count.
	Calls, Connects, ConcCalls, Tools int
	// Fleet is how many servers are connected at once in the memory
	// measurement (0: none), over FleetRounds rounds.
	Fleet, FleetRounds int
	// ConnectRounds is how many rounds the paired connect measure times
	// (Results.Connects), after ConnectWarmup rounds it does not keep.
	ConnectRounds, ConnectWarmup int
	// Transports limits the transports (nil: Transports).
	Transports []string
	// Eras limits the protocol eras (nil: Eras). The memory measurement
	// (Fleet) runs in the first alone.
	Eras []string
	// Log, when non-nil, gets one line per process run.
	Log io.Writer
}

// Defaults are the figures of make bench-peers.
var Defaults = Config{Rounds: 7, Calls: 2000, Connects: 5, ConcCalls: 2000, Tools: 10_000, Fleet: 100, FleetRounds: 3,
	ConnectRounds: 200, ConnectWarmup: 5}

func (c *Config) fill() {
	d := Defaults
	if c.Rounds <= 0 {
		c.Rounds = d.Rounds
	}
	if c.Calls <= 0 {
		c.Calls = d.Calls
	}
	if c.Connects <= 0 {
		c.Connects = d.Connects
	}
	if c.ConcCalls <= 0 {
		c.ConcCalls = d.ConcCalls
	}
	if c.Tools <= 0 {
		c.Tools = d.Tools
	}
	if c.FleetRounds <= 0 {
		c.FleetRounds = d.FleetRounds
	}
	if c.ConnectRounds <= 0 {
		c.ConnectRounds = d.ConnectRounds
	}
	if c.ConnectWarmup <= 0 {
		c.ConnectWarmup = d.ConnectWarmup
	}
	if c.Transports == nil {
		c.Transports = Transports
	}
	if c.Eras == nil {
		c.Eras = Eras
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
}

// Results are every process's figures, by kind and transport.
type Results struct {
	Config Config
	Runs   map[Key][]clientkit.Figures
	Fleets map[Key][]clientkit.Figures
	// Connects are the paired connect measure's times, by kind, transport
	// and era: element i of every kind of one transport and era was timed
	// in the same round, one connect of each kind back to back
	// (pairedConnects).
	Connects map[Key][]time.Duration
	// ServerStarts are, per round with stdio, how long the full stdio
	// server took to build its tools and exit on an empty stdin: a part of
	// every client's stdio listing that is the server's, not the client's.
	ServerStarts []time.Duration
}

// Key is a client kind over a transport in a protocol era.
type Key struct{ Kind, Transport, Era string }

// httpServer is a benchserver serving Streamable HTTP on loopback.
type httpServer struct {
	cmd   *exec.Cmd
	stdin io.Closer
	url   string
}

func startHTTP(ctx context.Context, dir string, tools int, stateless bool) (*httpServer, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "benchserver"), "-http", "127.0.0.1:0", "-tools", strconv.Itoa(tools),
		"-stateless="+strconv.FormatBool(stateless))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &httpServer{cmd: cmd, stdin: stdin}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "http://127.0.0.1:") {
		s.stop()
		return nil, fmt.Errorf("benchserver -http printed no loopback endpoint (%v)", err)
	}
	s.url = strings.TrimSpace(line)
	return s, nil
}

// stop closes the server's stdin (it exits), killing it after 5 s.
func (s *httpServer) stop() {
	_ = s.stdin.Close()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// Run runs the benchmark of cfg.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	cfg.fill()
	r := &Results{Config: cfg, Runs: map[Key][]clientkit.Figures{}, Fleets: map[Key][]clientkit.Figures{}, Connects: map[Key][]time.Duration{}}
	// The HTTP servers of each era: the go-sdk serves 2026-07-28 on
	// stateless Streamable HTTP alone, so the modern era's servers are
	// stateless ones (as a modern deployment's are) and the legacy era's
	// the stateful ones the legacy figures were always measured on.
	urls := map[string]string{}
	if slices.Contains(cfg.Transports, "http") {
		for _, era := range cfg.Eras {
			for _, which := range []string{"full", "small"} {
				tools := cfg.Tools
				if which == "small" {
					tools = 0
				}
				s, err := startHTTP(ctx, cfg.Dir, tools, era == "modern")
				if err != nil {
					return nil, err
				}
				defer s.stop()
				urls[era+"/"+which] = s.url
			}
		}
	}
	args := func(transport, era string) []string {
		a := []string{"-transport", transport, "-era", era, "-calls", strconv.Itoa(cfg.Calls), "-connects", strconv.Itoa(cfg.Connects),
			"-conc-calls", strconv.Itoa(cfg.ConcCalls)}
		if transport == "http" {
			return append(a, "-url", urls[era+"/full"], "-small-url", urls[era+"/small"])
		}
		return append(a, "-server", filepath.Join(cfg.Dir, "benchserver"), "-tools", strconv.Itoa(cfg.Tools))
	}
	for round := range cfg.Rounds {
		if slices.Contains(cfg.Transports, "stdio") {
			d, err := serverStart(ctx, cfg)
			if err != nil {
				return nil, err
			}
			r.ServerStarts = append(r.ServerStarts, d)
		}
		for _, tr := range cfg.Transports {
			for _, era := range cfg.Eras {
				for i := range Kinds {
					kind := Kinds[(i+round)%len(Kinds)]
					if !speaks(kind, era) {
						continue
					}
					f, err := runClient(ctx, cfg, kind, args(tr, era))
					if err != nil {
						return nil, err
					}
					fmt.Fprintf(cfg.Log, "round %d %s/%s/%s: p50 %s, listing %s\n", round+1, kind, era, tr, time.Duration(f.CallP50NS), time.Duration(f.ListNS))
					k := Key{kind, tr, era}
					r.Runs[k] = append(r.Runs[k], f)
				}
			}
		}
	}
	for _, tr := range cfg.Transports {
		for _, era := range cfg.Eras {
			byKind, err := pairedConnects(ctx, cfg, tr, era, args(tr, era))
			if err != nil {
				return nil, err
			}
			for kind, ds := range byKind {
				r.Connects[Key{kind, tr, era}] = ds
			}
			for _, kind := range Kinds[1:] {
				k := Key{kind, tr, era}
				if excess, _, ok := r.PairedExcess(k); ok {
					lo, hi, _ := r.PairedInterval(k)
					fmt.Fprintf(cfg.Log, "paired connects %s/%s/%s, %d rounds: excess over %s %+.2f ms, 95%% interval [%+.2f, %+.2f] ms\n",
						kind, era, tr, cfg.ConnectRounds, Kinds[0], excess.Seconds()*1e3, lo.Seconds()*1e3, hi.Seconds()*1e3)
				}
			}
		}
	}
	if cfg.Fleet > 0 {
		for round := range cfg.FleetRounds {
			for _, tr := range cfg.Transports {
				for i := range Kinds {
					kind := Kinds[(i+round)%len(Kinds)]
					era := cfg.Eras[0]
					if !speaks(kind, era) {
						continue
					}
					a := append(args(tr, era), "-fleet", strconv.Itoa(cfg.Fleet))
					f, err := runClient(ctx, cfg, kind, a)
					if err != nil {
						return nil, err
					}
					fmt.Fprintf(cfg.Log, "fleet round %d %s/%s/%s: %d servers, heap %s, RSS %s\n", round+1, kind, era, tr, f.Servers,
						size(float64(f.FleetHeapBytes)), size(float64(f.FleetRSSBytes)))
					k := Key{kind, tr, era}
					r.Fleets[k] = append(r.Fleets[k], f)
				}
			}
		}
	}
	return r, nil
}

// pairedConnects is the connect measure: one client process per kind
// (clientkit.ServeConnects), all started before the first connect and
// asked in turns, so that each round times one connect of every kind back
// to back, the kind going first rotating from round to round. The first
// cfg.ConnectWarmup rounds (a process's first connects run cold code
// paths) are not kept. What the connects share (the load of the moment, a
// stdio server's start) falls on every kind of a round alike, so the
// difference of two kinds' connects in one round measures the clients
// alone; the processes' own start is outside every connect.
func pairedConnects(ctx context.Context, cfg Config, tr, era string, args []string) (map[string][]time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	type server struct {
		kind string
		cmd  *exec.Cmd
		in   io.WriteCloser
		out  *bufio.Reader
		err  bytes.Buffer
	}
	var servers []*server
	defer func() {
		for _, s := range servers {
			_ = s.in.Close()
			_ = s.cmd.Wait()
		}
	}()
	for _, kind := range Kinds {
		if !speaks(kind, era) {
			continue
		}
		s := &server{kind: kind, cmd: exec.CommandContext(ctx, filepath.Join(cfg.Dir, programs[kind]), append(args, "-connect-serve")...)}
		s.cmd.Dir = cfg.Dir
		s.cmd.Stderr = &s.err
		var err error
		if s.in, err = s.cmd.StdinPipe(); err != nil {
			return nil, err
		}
		out, err := s.cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		s.out = bufio.NewReader(out)
		if err := s.cmd.Start(); err != nil {
			return nil, err
		}
		servers = append(servers, s)
	}
	got := map[string][]time.Duration{}
	for round := range cfg.ConnectWarmup + cfg.ConnectRounds {
		for i := range servers {
			s := servers[(i+round)%len(servers)]
			if _, err := io.WriteString(s.in, "connect\n"); err != nil {
				return nil, fmt.Errorf("%s -connect-serve: %w", programs[s.kind], err)
			}
			line, err := s.out.ReadString('\n')
			if err != nil {
				_ = s.in.Close()
				_ = s.cmd.Wait() // its stderr is complete once it was waited for
				return nil, fmt.Errorf("%s -connect-serve (%s/%s): %w\n%s", programs[s.kind], era, tr, err, tail(s.err.Bytes()))
			}
			ns, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
			if err != nil || ns <= 0 {
				return nil, fmt.Errorf("%s -connect-serve printed %q", programs[s.kind], line)
			}
			if round >= cfg.ConnectWarmup {
				got[s.kind] = append(got[s.kind], time.Duration(ns))
			}
		}
	}
	return got, nil
}

// serverStart times the full stdio server from its start to its exit on
// an empty stdin.
func serverStart(ctx context.Context, cfg Config) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(cfg.Dir, "benchserver"), "-tools", strconv.Itoa(cfg.Tools))
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("benchserver on an empty stdin: %w\n%s", err, tail(out))
	}
	return time.Since(start), nil
}

// runClient runs kind's client program with args and decodes its figures.
func runClient(ctx context.Context, cfg Config, kind string, args []string) (clientkit.Figures, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(cfg.Dir, programs[kind]), args...)
	cmd.Dir = cfg.Dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var f clientkit.Figures
	if err := cmd.Run(); err != nil {
		return f, fmt.Errorf("%s %s: %w\n%s", programs[kind], strings.Join(args[:2], " "), err, tail(stderr.Bytes()))
	}
	if err := json.Unmarshal(stdout.Bytes(), &f); err != nil {
		return f, fmt.Errorf("%s printed no figures: %w", programs[kind], err)
	}
	if f.Kind != kind {
		return f, errors.New(programs[kind] + " reported another kind")
	}
	return f, nil
}

// tail is the last 2 KiB of b.
func tail(b []byte) []byte {
	if len(b) > 2048 {
		return b[len(b)-2048:]
	}
	return b
}

// Leftovers returns the ids of the running processes whose program is one
// of dir's (on Linux, from /proc; nil elsewhere): after Run, none should
// be left, every stdio server reaped by its client and the HTTP servers by
// Run.
func Leftovers(dir string) []int {
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	var ids []int
	for _, p := range procs {
		exe, err := os.Readlink(p)
		if err != nil || filepath.Dir(exe) != dir {
			continue
		}
		if id, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}
