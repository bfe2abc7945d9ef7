// Command bench-peers runs the peer benchmark (make bench-peers): the raw
// go-sdk client, mark3labs/mcp-go and mcpward against the same go-sdk
// server over stdio and Streamable HTTP, each in its own process, and
// prints the medians and ratios to the raw go-sdk client as markdown.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/mcpward/mcpward/bench/internal/clientkit"
	"github.com/mcpward/mcpward/bench/internal/harness"
)

func main() {
	d := harness.Defaults
	cfg := harness.Config{Log: os.Stderr}
	flag.IntVar(&cfg.Rounds, "rounds", d.Rounds, "interleaved rounds")
	flag.IntVar(&cfg.Calls, "calls", d.Calls, "sequential echo calls per process")
	flag.IntVar(&cfg.Connects, "connects", d.Connects, "connects to the small server per process")
	flag.IntVar(&cfg.ConcCalls, "conc-calls", d.ConcCalls, "calls shared by 8 concurrent callers per process")
	flag.IntVar(&cfg.Tools, "tools", d.Tools, "tools of the full server besides echo")
	flag.IntVar(&cfg.Fleet, "fleet", d.Fleet, "servers connected at once in the memory measurement (0: skip it)")
	flag.IntVar(&cfg.FleetRounds, "fleet-rounds", d.FleetRounds, "rounds of the memory measurement")
	flag.IntVar(&cfg.ConnectRounds, "connect-rounds", d.ConnectRounds, "rounds of the paired connect measure (one connect per client kind in each)")
	flag.IntVar(&cfg.ConnectWarmup, "connect-warmup", d.ConnectWarmup, "rounds of the paired connect measure run first and not kept")
	flag.StringVar(&rawOut, "raw", "", "also write every process's figures to this file as JSON")
	transports := flag.String("transports", strings.Join(harness.Transports, ","), "comma-separated transports")
	eras := flag.String("eras", strings.Join(harness.Eras, ","), "comma-separated protocol eras (legacy, modern)")
	flag.Parse()
	cfg.Transports = strings.Split(*transports, ",")
	cfg.Eras = strings.Split(*eras, ",")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench-peers:", err)
		os.Exit(1)
	}
}

// rawOut is the -raw file.
var rawOut string

func run(ctx context.Context, cfg harness.Config) error {
	dir, err := os.MkdirTemp("", "bench-peers-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintln(os.Stderr, "building the server and the client programs")
	if err := harness.Build(ctx, dir); err != nil {
		return err
	}
	cfg.Dir = dir
	r, err := harness.Run(ctx, cfg)
	if err != nil {
		return err
	}
	r.Markdown(os.Stdout)
	if rawOut == "" {
		return nil
	}
	return writeRaw(rawOut, r)
}

// writeRaw writes every process's figures to path as JSON.
func writeRaw(path string, r *harness.Results) error {
	var all []clientkit.Figures
	for _, k := range harness.Kinds {
		for _, tr := range r.Config.Transports {
			for _, era := range r.Config.Eras {
				all = append(all, r.Runs[harness.Key{Kind: k, Transport: tr, Era: era}]...)
				all = append(all, r.Fleets[harness.Key{Kind: k, Transport: tr, Era: era}]...)
			}
		}
	}
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
