package core_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const modPrefix = "github.com/mcpward/mcpward/"

// TestDependencyRule enforces the dependency rule (README, "Layout") mechanically,
// over every module of the workspace: ports imports only the standard
// library; core only the standard library and ports; an adapter never
// imports another adapter; the go-sdk is imported only by adapters (the
// composition root reaches it only through them); the PostgreSQL driver
// (pgx) is imported only by adapters/pgstore; adapters/hostconfig (pure
// decoding of other hosts' files) imports only ports, core and its TOML
// library, which no other module imports directly; adapters/memstore
// imports only ports; a module under adapters/internal (code the adapters
// share, e.g. the JSON-RPC wire codec) imports only the standard library,
// core/refusal, core/jsontext and the go-sdk's jsonrpc package, every
// adapter may import it and nothing outside adapters/ does; the examples are a
// standalone peer that imports no mcpward package; a bridge (bridges/*)
// imports composition, ports, core and its model API's SDK only, that SDK
// is imported by no other module, and no module imports a bridge; the peer
// benchmark (bench) may import anything, nothing imports it, and only it
// links mcp-go; the composition module depends on no keychain, PostgreSQL
// or conformance package (those belong to the composition/desktop and
// composition/shared modules and to tests), only composition/desktop
// imports adapters/keychainstore, only composition/shared, the CLI and the
// test-only composition/internal/pgtest import adapters/pgstore, and
// nothing imports composition/integration or (outside tests)
// composition/internal/pgtest; only the CLI links OpenTelemetry's SDK and
// exporters (every other module uses the API alone, and the host's
// providers). Test-only imports are not counted (go list without -test).
func TestDependencyRule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	mods := modules(t, root)
	require.Contains(t, mods, "ports")
	require.Contains(t, mods, "core")
	for _, mod := range mods {
		dir := filepath.Join(root, mod)
		for _, dep := range goList(t, dir, "-deps", "{{if not .Standard}}{{.ImportPath}}{{end}}") {
			if msg := violation(mod, dep, false); msg != "" {
				t.Errorf("module %s depends on %s: %s", mod, dep, msg)
			}
		}
		for _, dep := range goList(t, dir, "", "{{range .Imports}}{{.}}\n{{end}}") {
			if first, _, _ := strings.Cut(dep, "/"); !strings.Contains(first, ".") {
				continue // the standard library
			}
			if msg := violation(mod, dep, true); msg != "" {
				t.Errorf("module %s imports %s: %s", mod, dep, msg)
			}
		}
	}
}

// benchModule is the peer benchmark (make bench-peers): it may import
// anything (the go-sdk and mcp-go clients it compares mcpward with), and
// nothing imports it.
const benchModule = "bench"

// cliModule is the CLI's module: the only one that may use cobra.
const cliModule = "composition/cmd/mcpward"

// The composition modules: the root (what every host requires: the Host
// and the memory and headless profiles), the profiles needing a store
// adapter, and the test-only ones.
const (
	compositionModule = "composition"
	desktopModule     = "composition/desktop"
	sharedModule      = "composition/shared"
	pgtestModule      = "composition/internal/pgtest"
	integrationModule = "composition/integration"
)

// storeOnly are the packages the composition module never depends on:
// the keychain and its D-Bus client, the PostgreSQL driver and store, and
// the conformance suites (test-only).
var storeOnly = []string{
	modPrefix + "adapters/keychainstore", "github.com/99designs/", "github.com/godbus/",
	modPrefix + "adapters/pgstore", "github.com/jackc/",
	modPrefix + "conformance",
}

// cliAdapters are the adapters the CLI may import: those composition
// exposes types and reason words of (composition/shared.Store takes a
// pgstore.Keyring; the shared store fails with pgstore's reasons), and
// hostconfig, the pure decoder of other hosts' files that import uses.
var cliAdapters = []string{"adapters/hostconfig", "adapters/httptransport", "adapters/oauth", "adapters/pgstore", "adapters/stdiotransport"}

// isCobra reports whether dep is cobra or its flag package.
func isCobra(dep string) bool {
	return strings.HasPrefix(dep, "github.com/spf13/cobra") || strings.HasPrefix(dep, "github.com/spf13/pflag")
}

// isOtelSDK reports whether dep is OpenTelemetry's SDK or one of its
// exporters: only the CLI links them (and the tests of any module, which
// are not counted); a library module uses the API alone and takes the
// host's providers.
func isOtelSDK(dep string) bool {
	for _, p := range []string{"go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters", "go.opentelemetry.io/contrib/exporters"} {
		if dep == p || strings.HasPrefix(dep, p+"/") {
			return true
		}
	}
	return false
}

// isOtel reports whether dep is a package of OpenTelemetry.
func isOtel(dep string) bool { return strings.HasPrefix(dep, "go.opentelemetry.io/") }

// bridgeSDKs maps the module path of each model API's SDK to the bridge
// module, the only one that imports it.
var bridgeSDKs = map[string]string{
	"github.com/anthropics/anthropic-sdk-go": "bridges/anthropic",
	"github.com/openai/openai-go":            "bridges/openai",
}

// bridgeSDK returns the bridge module whose SDK dep belongs to, or "".
func bridgeSDK(dep string) string {
	for sdk, mod := range bridgeSDKs {
		if dep == sdk || strings.HasPrefix(dep, sdk+"/") {
			return mod
		}
	}
	return ""
}

// adaptersInternal is the folder of the modules the adapters share (Go's
// internal rule also keeps everything outside adapters/ from importing
// them).
const adaptersInternal = "adapters/internal"

// sharedAllowed are the mcpward packages a module under adaptersInternal
// may import, besides its own.
var sharedAllowed = []string{"core/refusal", "core/jsontext"}

// sharedSDK is the one go-sdk package a module under adaptersInternal may
// import: the JSON-RPC message types.
const sharedSDK = "github.com/modelcontextprotocol/go-sdk/jsonrpc"

// within reports whether rel is the package p or one under it.
func within(rel, p string) bool { return rel == p || strings.HasPrefix(rel, p+"/") }

// violation returns why module mod may not depend on package dep, or "".
// direct says dep is imported by one of mod's own packages (not only
// reached through another package).
func violation(mod, dep string, direct bool) string {
	own := strings.HasPrefix(dep, modPrefix)
	rel := strings.TrimPrefix(dep, modPrefix)
	if mod == benchModule {
		return "" // the peer benchmark may import anything
	}
	if own && within(rel, benchModule) {
		return "nothing imports the peer benchmark (" + benchModule + ")"
	}
	if own && within(rel, integrationModule) && mod != integrationModule {
		return "nothing imports the test-only module " + integrationModule
	}
	if own && within(rel, pgtestModule) && mod != pgtestModule {
		return pgtestModule + " is for tests only"
	}
	if mod == compositionModule && slices.ContainsFunc(storeOnly, func(p string) bool { return strings.HasPrefix(dep, p) }) {
		return "the composition module requires only what the headless path needs: the keychain belongs to " + desktopModule +
			", PostgreSQL to " + sharedModule + ", the conformance suites to tests"
	}
	if own && within(rel, "adapters/keychainstore") && direct && mod != "adapters/keychainstore" && mod != desktopModule {
		return "only " + desktopModule + " imports adapters/keychainstore"
	}
	if own && within(rel, "adapters/pgstore") && direct && mod != "adapters/pgstore" && mod != sharedModule && mod != cliModule && mod != pgtestModule {
		return "only " + sharedModule + ", the CLI and " + pgtestModule + " import adapters/pgstore"
	}
	if own && within(rel, adaptersInternal) && direct && !strings.HasPrefix(mod, "adapters/") {
		return "only adapters import " + adaptersInternal + "/..."
	}
	if strings.HasPrefix(dep, "github.com/mark3labs/") {
		return "mcp-go is only the peer benchmark's comparison: it is never linked into mcpward"
	}
	if isCobra(dep) && mod != cliModule {
		return "only the CLI (" + cliModule + ") uses cobra: a host importing composition never gets it"
	}
	if isOtelSDK(dep) && mod != cliModule {
		return "only the CLI (" + cliModule + ") links OpenTelemetry's SDK and exporters: a library uses the API and the host's providers"
	}
	if own && within(rel, "bridges") && !within(rel, mod) {
		return "nothing imports a bridge but the host: no adapter, core, composition or other bridge package"
	}
	if sdk := bridgeSDK(dep); sdk != "" && direct && mod != sdk {
		return "a model API's SDK is imported only by its bridge (" + sdk + ")"
	}
	switch {
	case strings.HasPrefix(mod, "bridges/"):
		if own && direct && !within(rel, mod) && !within(rel, "composition") && !within(rel, "core") && !within(rel, "ports") {
			return "a bridge imports composition, ports, core and its model API's SDK only"
		}
		if direct && !own && bridgeSDK(dep) != mod {
			return "a bridge's only third-party import is its model API's SDK"
		}
	case mod == cliModule:
		if own && direct && !within(rel, cliModule) && !within(rel, "composition") && !within(rel, "core") &&
			!within(rel, "ports") && !slices.ContainsFunc(cliAdapters, func(a string) bool { return within(rel, a) }) {
			return "the CLI imports composition, core, ports and " + strings.Join(cliAdapters, ", ") + " only"
		}
		if direct && !own && !isCobra(dep) && !isOtel(dep) {
			return "the CLI's only third-party imports are cobra (and its pflag) and OpenTelemetry"
		}
	case mod == "ports":
		if !(own && (rel == "ports" || strings.HasPrefix(rel, "ports/"))) {
			return "ports may import only the standard library"
		}
	case mod == "core":
		if !(own && (rel == "ports" || strings.HasPrefix(rel, "ports/") || rel == "core" || strings.HasPrefix(rel, "core/"))) {
			return "core may import only the standard library and ports"
		}
	case mod == "adapters/hostconfig":
		if own && !within(rel, "ports") && !within(rel, "core") && !within(rel, mod) {
			return "adapters/hostconfig imports only ports and core of mcpward: it decodes bytes, nothing more"
		}
		if direct && !own && !strings.HasPrefix(dep, "github.com/pelletier/go-toml/v2") {
			return "adapters/hostconfig's only third-party import is its TOML library"
		}
	case mod == "adapters/memstore":
		if own && !within(rel, "ports") && !within(rel, mod) {
			return "adapters/memstore imports only ports of mcpward: it keeps the stores in memory, nothing more"
		}
		if direct && !own {
			return "adapters/memstore imports no third-party package"
		}
	case within(mod, adaptersInternal):
		if own && !within(rel, mod) && !slices.ContainsFunc(sharedAllowed, func(p string) bool { return within(rel, p) }) {
			return "a module under " + adaptersInternal + " imports only " + strings.Join(sharedAllowed, " and ") + " of mcpward"
		}
		if direct && !own && dep != sharedSDK {
			return "a module under " + adaptersInternal + "'s only third-party import is the go-sdk's jsonrpc package"
		}
	case strings.HasPrefix(mod, "adapters/"):
		if own && strings.HasPrefix(rel, "adapters/") && !within(rel, mod) && !within(rel, adaptersInternal) {
			return "an adapter never imports another adapter"
		}
	case mod == "examples":
		if own && rel != "examples" && !strings.HasPrefix(rel, "examples/") {
			return "the examples are a standalone peer and import no mcpward package"
		}
	}
	sdk := strings.HasPrefix(dep, "github.com/modelcontextprotocol/go-sdk")
	if sdk && direct && !strings.HasPrefix(mod, "adapters/") && mod != "examples" {
		return "the go-sdk is imported only by adapters"
	}
	if strings.HasPrefix(dep, "github.com/pelletier/go-toml") && direct && mod != "adapters/hostconfig" {
		return "the TOML library is imported only by adapters/hostconfig"
	}
	pgx := strings.HasPrefix(dep, "github.com/jackc/")
	if pgx && direct && mod != "adapters/pgstore" {
		return "the PostgreSQL driver is imported only by adapters/pgstore"
	}
	if own && strings.HasPrefix(rel, "ports/portstest") && mod != "ports" && mod != "conformance" {
		return "portstest fakes are for tests only"
	}
	return ""
}

func TestViolationRules(t *testing.T) {
	cases := []struct {
		mod, dep string
		direct   bool
		bad      bool
	}{
		{"ports", "github.com/stretchr/testify/require", true, true},
		{"ports", modPrefix + "core/refusal", true, true},
		{"ports", modPrefix + "ports/portstest", true, false},
		{"core", modPrefix + "ports", true, false},
		{"adapters/memstore", modPrefix + "ports", true, false},
		{"adapters/memstore", modPrefix + "core/refusal", true, true},
		{"adapters/memstore", "github.com/stretchr/testify/require", true, true},
		{"core", modPrefix + "core/secret", true, false},
		{"core", modPrefix + "adapters/filestore", true, true},
		{"core", "golang.org/x/sync/singleflight", true, true},
		{"adapters/filestore", modPrefix + "adapters/keychainstore", true, true},
		{"adapters/filestore", modPrefix + "adapters/filestore/internal/x", true, false},
		{"adapters/filestore", modPrefix + "core/refusal", true, false},
		{"adapters/mcpsession", "github.com/modelcontextprotocol/go-sdk/mcp", true, false},
		{"composition", "github.com/modelcontextprotocol/go-sdk/mcp", true, true},
		{"core", "github.com/modelcontextprotocol/go-sdk/mcp", true, true},
		{"composition", modPrefix + "ports/portstest", true, true},
		{"composition", "github.com/modelcontextprotocol/go-sdk/mcp", false, false},
		{"core", "github.com/modelcontextprotocol/go-sdk/mcp", false, true},
		{"examples", "github.com/modelcontextprotocol/go-sdk/mcp", true, false},
		{"examples", modPrefix + "ports", false, true},
		{"examples", modPrefix + "examples/server", true, false},
		{"adapters/mcpsession", modPrefix + "adapters/httptransport", false, true},
		{cliModule, "github.com/spf13/cobra", true, false},
		{cliModule, "go.opentelemetry.io/otel/sdk/trace", true, false},
		{cliModule, "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp", true, false},
		{"composition", "go.opentelemetry.io/otel/trace", true, false},
		{"composition", "go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv", true, false},
		{"composition", "go.opentelemetry.io/otel/sdk/trace", true, true},
		{"composition", "go.opentelemetry.io/otel/sdk/metric", false, true},
		{"adapters/mcpsession", "go.opentelemetry.io/otel/exporters/stdout/stdouttrace", true, true},
		{"bridges/anthropic", "go.opentelemetry.io/otel/sdk", false, true},
		{"composition/shared", "go.opentelemetry.io/contrib/exporters/autoexport", true, true},
		{cliModule, "github.com/spf13/pflag", true, false},
		{cliModule, modPrefix + "composition", true, false},
		{cliModule, modPrefix + cliModule + "/internal/termsafe", true, false},
		{cliModule, modPrefix + "core/refusal", true, false},
		{cliModule, modPrefix + "ports", true, false},
		{cliModule, modPrefix + "adapters/oauth", true, false},
		{cliModule, modPrefix + "adapters/stdiotransport", true, false},
		{cliModule, modPrefix + "adapters/pgstore", true, false},
		{cliModule, modPrefix + "adapters/mcpsession", true, true},
		{cliModule, modPrefix + "adapters/mcpsession", false, false},
		{cliModule, modPrefix + "adapters/filestore", true, true},
		{cliModule, modPrefix + "conformance", true, true},
		{cliModule, modPrefix + "ports/portstest", true, true},
		{cliModule, "github.com/modelcontextprotocol/go-sdk/mcp", true, true},
		{cliModule, "github.com/modelcontextprotocol/go-sdk/mcp", false, false},
		{cliModule, "golang.org/x/term", true, true},
		{cliModule, "golang.org/x/term", false, false},
		{"composition", "github.com/spf13/cobra", false, true},
		{"composition", "github.com/spf13/pflag", true, true},
		{"core", "github.com/spf13/cobra/doc", false, true},
		{"adapters/hostconfig", "github.com/pelletier/go-toml/v2", true, false},
		{"adapters/hostconfig", modPrefix + "core/definition", true, false},
		{"adapters/hostconfig", modPrefix + "ports", true, false},
		{"adapters/hostconfig", modPrefix + "adapters/oauth", true, true},
		{"adapters/hostconfig", modPrefix + "composition", true, true},
		{"adapters/hostconfig", "github.com/jackc/pgx/v5", true, true},
		{"adapters/hostconfig", "github.com/modelcontextprotocol/go-sdk/mcp", true, true},
		{"core", "github.com/pelletier/go-toml/v2", true, true},
		{cliModule, "github.com/pelletier/go-toml/v2", true, true},
		{cliModule, modPrefix + "adapters/hostconfig", true, false},
		{"adapters/pgstore", "github.com/jackc/pgx/v5", true, false},
		{"adapters/pgstore", "github.com/jackc/pgx/v5/pgxpool", true, false},
		{"adapters/pgstore", modPrefix + "ports", true, false},
		{"adapters/pgstore", modPrefix + "core/refusal", true, false},
		{"adapters/pgstore", modPrefix + "adapters/filestore", true, true},
		{"adapters/pgstore", modPrefix + "adapters/oauth", false, true},
		{"adapters/filestore", modPrefix + "adapters/pgstore", true, true},
		{"adapters/oauth", "github.com/jackc/pgx/v5", true, true},
		{"core", "github.com/jackc/pgx/v5", false, true},
		{"composition", "github.com/jackc/pgx/v5", true, true},
		{"composition", "github.com/jackc/pgx/v5", false, true},
		{"composition", modPrefix + "adapters/pgstore", true, true},
		{"composition", modPrefix + "adapters/pgstore", false, true},
		{"composition", modPrefix + "adapters/keychainstore", false, true},
		{"composition", "github.com/99designs/keyring", false, true},
		{"composition", "github.com/godbus/dbus", false, true},
		{"composition", modPrefix + "conformance", false, true},
		{"composition", modPrefix + "adapters/oauth", true, false},
		{"composition", modPrefix + "adapters/filestore", true, false},
		{desktopModule, modPrefix + "adapters/keychainstore", true, false},
		{desktopModule, "github.com/99designs/keyring", false, false},
		{desktopModule, modPrefix + "composition/signin", true, false},
		{desktopModule, modPrefix + "adapters/pgstore", true, true},
		{desktopModule, "github.com/jackc/pgx/v5", true, true},
		{sharedModule, modPrefix + "adapters/pgstore", true, false},
		{sharedModule, "github.com/jackc/pgx/v5", false, false},
		{sharedModule, "github.com/jackc/pgx/v5", true, true},
		{sharedModule, modPrefix + "adapters/keychainstore", true, true},
		{cliModule, modPrefix + "composition/desktop", true, false},
		{cliModule, modPrefix + "composition/shared", true, false},
		{cliModule, modPrefix + "adapters/keychainstore", true, true},
		{cliModule, modPrefix + "adapters/keychainstore", false, false},
		{"adapters/filestore", modPrefix + "adapters/pgstore", false, true},
		{pgtestModule, modPrefix + "adapters/pgstore", true, false},
		{pgtestModule, modPrefix + "adapters/pgstore/pgstoretest", true, false},
		{sharedModule, modPrefix + pgtestModule, true, true},
		{cliModule, modPrefix + pgtestModule, false, true},
		{"composition", modPrefix + pgtestModule, true, true},
		{"composition", modPrefix + integrationModule, true, true},
		{cliModule, modPrefix + integrationModule, false, true},
		{integrationModule, modPrefix + "conformance", true, false},
		{integrationModule, modPrefix + "composition", true, false},
		{"bridges/anthropic", "github.com/anthropics/anthropic-sdk-go/v2", true, false},
		{"bridges/anthropic", "github.com/anthropics/anthropic-sdk-go/v2/option", true, false},
		{"bridges/anthropic", modPrefix + "composition", true, false},
		{"bridges/anthropic", modPrefix + "core/toolcall", true, false},
		{"bridges/anthropic", modPrefix + "ports", true, false},
		{"bridges/anthropic", modPrefix + "bridges/anthropic/internal/x", true, false},
		{"bridges/anthropic", modPrefix + "adapters/mcpsession", true, true},
		{"bridges/anthropic", modPrefix + "adapters/mcpsession", false, false},
		{"bridges/anthropic", modPrefix + "bridges/openai", true, true},
		{"bridges/anthropic", modPrefix + "bridges/openai", false, true},
		{"bridges/anthropic", "github.com/openai/openai-go/v3", true, true},
		{"bridges/anthropic", "github.com/modelcontextprotocol/go-sdk/mcp", true, true},
		{"bridges/anthropic", "github.com/tidwall/gjson", true, true},
		{"bridges/anthropic", "github.com/tidwall/gjson", false, false},
		{"bridges/anthropic", modPrefix + "ports/portstest", true, true},
		{"bridges/openai", "github.com/openai/openai-go/v3/responses", true, false},
		{"bridges/openai", modPrefix + "composition", true, false},
		{"bridges/openai", "github.com/anthropics/anthropic-sdk-go/v2", true, true},
		{"bridges/openai", modPrefix + "bridges/anthropic", true, true},
		{"bridges/openai", modPrefix + "adapters/oauth", true, true},
		{"composition", modPrefix + "bridges/anthropic", true, true},
		{"composition", modPrefix + "bridges/openai", false, true},
		{"core", modPrefix + "bridges/openai", true, true},
		{"adapters/mcpsession", modPrefix + "bridges/anthropic", false, true},
		{cliModule, modPrefix + "bridges/anthropic", true, true},
		{"examples", modPrefix + "bridges/openai", true, true},
		{"composition", "github.com/anthropics/anthropic-sdk-go/v2", true, true},
		{"composition", "github.com/anthropics/anthropic-sdk-go/v2", false, false},
		{"core", "github.com/openai/openai-go/v3", false, true},
		{"adapters/httptransport", "github.com/openai/openai-go/v3", true, true},
		{"adapters/stdiotransport", modPrefix + "adapters/internal/jsonrpcwire", true, false},
		{"adapters/httptransport", modPrefix + "adapters/internal/jsonrpcwire", true, false},
		{"adapters/mcpsession", modPrefix + "adapters/internal/jsonrpcwire", false, false},
		{"adapters/stdiotransport", modPrefix + "adapters/httptransport", true, true},
		{"adapters/stdiotransport", modPrefix + "adapters/internalx", true, true},
		{"composition", modPrefix + "adapters/internal/jsonrpcwire", true, true},
		{"composition", modPrefix + "adapters/internal/jsonrpcwire", false, false},
		{cliModule, modPrefix + "adapters/internal/jsonrpcwire", true, true},
		{"core", modPrefix + "adapters/internal/jsonrpcwire", true, true},
		{"examples", modPrefix + "adapters/internal/jsonrpcwire", true, true},
		{"bridges/openai", modPrefix + "adapters/internal/jsonrpcwire", true, true},
		{"adapters/internal/jsonrpcwire", "github.com/modelcontextprotocol/go-sdk/jsonrpc", true, false},
		{"adapters/internal/jsonrpcwire", "github.com/modelcontextprotocol/go-sdk/internal/jsonrpc2", false, false},
		{"adapters/internal/jsonrpcwire", "github.com/segmentio/encoding/json", false, false},
		{"adapters/internal/jsonrpcwire", "github.com/modelcontextprotocol/go-sdk/mcp", true, true},
		{"adapters/internal/jsonrpcwire", "github.com/modelcontextprotocol/go-sdk/internal/jsonrpc2", true, true},
		{"adapters/internal/jsonrpcwire", "github.com/stretchr/testify/require", true, true},
		{"adapters/internal/jsonrpcwire", modPrefix + "core/jsontext", true, false},
		{"adapters/internal/jsonrpcwire", modPrefix + "core/refusal", true, false},
		{"adapters/internal/jsonrpcwire", modPrefix + "adapters/internal/jsonrpcwire/x", true, false},
		{"adapters/internal/jsonrpcwire", modPrefix + "core/catalog", true, true},
		{"adapters/internal/jsonrpcwire", modPrefix + "core/catalog", false, true},
		{"adapters/internal/jsonrpcwire", modPrefix + "ports", true, true},
		{"adapters/internal/jsonrpcwire", modPrefix + "adapters/stdiotransport", true, true},
		{"adapters/internal/jsonrpcwire", modPrefix + "adapters/internal/other", true, true},
		{benchModule, "github.com/mark3labs/mcp-go/client", true, false},
		{benchModule, "github.com/modelcontextprotocol/go-sdk/mcp", true, false},
		{benchModule, modPrefix + "composition/memory", true, false},
		{benchModule, modPrefix + "adapters/mcpsession", true, false},
		{"composition", "github.com/mark3labs/mcp-go/client", false, true},
		{"examples", "github.com/mark3labs/mcp-go/mcp", true, true},
		{"composition", modPrefix + "bench/internal/clientkit", true, true},
		{cliModule, modPrefix + "bench/internal/harness", false, true},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s->%s/direct=%v", c.mod, c.dep, c.direct), func(t *testing.T) {
			require.Equal(t, c.bad, violation(c.mod, c.dep, c.direct) != "")
		})
	}
}

// TestNoCobraInLibraryModuleGraphs: the module graph of every module but
// the CLI's, as a host sees it (GOWORK=off, its own go.mod), holds no
// cobra: importing composition never brings the CLI's dependencies along.
func TestNoCobraInLibraryModuleGraphs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	mods := modules(t, root)
	require.Contains(t, mods, "composition")
	require.Contains(t, mods, cliModule)
	for _, mod := range mods {
		cmd := exec.Command("go", "list", "-m", "all")
		cmd.Dir = filepath.Join(root, mod)
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go list -m all in %s: %s", mod, out)
		has := strings.Contains(string(out), "github.com/spf13/cobra ")
		if mod == cliModule {
			require.True(t, has, "the check looks at real graphs: the CLI's holds cobra")
			continue
		}
		if has {
			t.Errorf("module %s has cobra in its module graph", mod)
		}
	}
}

// TestCompositionRequiresOnlyTheHeadlessPath: the composition module's
// go.mod (what every host requires) lists no keychain, D-Bus, PostgreSQL
// or conformance module, and its module graph as a host sees it
// (GOWORK=off) holds none of the keychain, D-Bus or PostgreSQL modules.
// (The conformance module stays in the graph as a test-only requirement
// of the adapters, never built: nothing of composition imports it, which
// TestDependencyRule checks.)
func TestCompositionRequiresOnlyTheHeadlessPath(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	dir := filepath.Join(root, compositionModule)
	heavy := []string{modPrefix + "adapters/keychainstore", "github.com/99designs/", "github.com/godbus/", "github.com/gsterjov/",
		modPrefix + "adapters/pgstore", "github.com/jackc/", modPrefix + desktopModule, modPrefix + sharedModule}

	cmd := exec.Command("go", "mod", "edit", "-json")
	cmd.Dir = dir
	out, err := cmd.Output()
	require.NoError(t, err, "go mod edit -json in %s", dir)
	var gomod struct{ Require []struct{ Path string } }
	require.NoError(t, json.Unmarshal(out, &gomod))
	require.NotEmpty(t, gomod.Require, "the check reads real requirements")
	for _, r := range gomod.Require {
		for _, h := range append(heavy, modPrefix+"conformance") {
			if strings.HasPrefix(r.Path, h) {
				t.Errorf("composition/go.mod requires %s", r.Path)
			}
		}
	}

	cmd = exec.Command("go", "list", "-m", "all")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "go list -m all in %s: %s", dir, out)
	require.Contains(t, string(out), modPrefix+"adapters/oauth", "the check looks at the real graph")
	for _, line := range strings.Split(string(out), "\n") {
		for _, h := range heavy {
			if strings.HasPrefix(line, h) {
				t.Errorf("composition's module graph holds %s", line)
			}
		}
	}
}

// modules lists the module directories of the workspace (relative paths).
func modules(t *testing.T, root string) []string {
	t.Helper()
	var mods []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "go.mod" {
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			if rel != "." {
				mods = append(mods, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	require.NoError(t, err)
	return mods
}

// goList runs go list over the module's non-test packages with the given
// template (and flag, e.g. "-deps") and returns the non-empty output lines.
func goList(t *testing.T, dir, flag, format string) []string {
	t.Helper()
	args := []string{"list"}
	if flag != "" {
		args = append(args, flag)
	}
	args = append(args, "-f", format, "./...")
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(string(out), "matched no packages") {
		return nil
	}
	require.NoError(t, err, "go list in %s: %s", dir, out)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}
