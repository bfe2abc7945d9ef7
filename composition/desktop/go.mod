module github.com/mcpward/mcpward/composition/desktop

go 1.26.0

require (
	github.com/google/wire v0.7.0
	github.com/mcpward/mcpward/adapters/httptransport v0.0.0
	github.com/mcpward/mcpward/adapters/keychainstore v0.0.0
	github.com/mcpward/mcpward/adapters/oauth v0.0.0
	github.com/mcpward/mcpward/composition v0.0.0
	github.com/mcpward/mcpward/core v0.0.0
	github.com/mcpward/mcpward/ports v0.0.0
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/99designs/go-keychain v0.0.0-20191008050251-8e49817e8af4 // indirect
	github.com/99designs/keyring v1.2.2 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/danieljoos/wincred v1.1.2 // indirect
	github.com/dvsekhvalnov/jose2go v1.5.0 // indirect
	github.com/go-jose/go-jose/v4 v4.1.9 // indirect
	github.com/godbus/dbus v0.0.0-20190726142602-4481cbc300e2 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/gsterjov/go-libsecret v0.0.0-20161001094733-a6f4afe4910c // indirect
	github.com/mcpward/mcpward/adapters/filestore v0.0.0 // indirect
	github.com/mcpward/mcpward/adapters/internal/jsonrpcwire v0.0.0 // indirect
	github.com/mcpward/mcpward/adapters/mcpsession v0.0.0 // indirect
	github.com/mcpward/mcpward/adapters/stdiotransport v0.0.0 // indirect
	github.com/mtibben/percent v0.2.1 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	go.opentelemetry.io/otel v1.47.0 // indirect
	go.opentelemetry.io/otel/metric v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/term v0.3.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)

replace (
	github.com/mcpward/mcpward/adapters/filestore => ../../adapters/filestore
	github.com/mcpward/mcpward/adapters/httptransport => ../../adapters/httptransport
	github.com/mcpward/mcpward/adapters/internal/jsonrpcwire => ../../adapters/internal/jsonrpcwire
	github.com/mcpward/mcpward/adapters/keychainstore => ../../adapters/keychainstore
	github.com/mcpward/mcpward/adapters/mcpsession => ../../adapters/mcpsession
	github.com/mcpward/mcpward/adapters/memstore => ../../adapters/memstore
	github.com/mcpward/mcpward/adapters/oauth => ../../adapters/oauth
	github.com/mcpward/mcpward/adapters/stdiotransport => ../../adapters/stdiotransport
	github.com/mcpward/mcpward/composition => ../../composition
	github.com/mcpward/mcpward/conformance => ../../conformance
	github.com/mcpward/mcpward/core => ../../core
	github.com/mcpward/mcpward/ports => ../../ports
)
