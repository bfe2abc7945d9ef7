module github.com/mcpward/mcpward/bridges/openai

go 1.26.0

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/openai/openai-go/v3 v3.102.0 // indirect
	github.com/tidwall/gjson v1.20.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.1 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
)

replace (
	github.com/mcpward/mcpward/adapters/filestore => ../../adapters/filestore
	github.com/mcpward/mcpward/adapters/httptransport => ../../adapters/httptransport
	github.com/mcpward/mcpward/adapters/keychainstore => ../../adapters/keychainstore
	github.com/mcpward/mcpward/adapters/mcpsession => ../../adapters/mcpsession
	github.com/mcpward/mcpward/adapters/memstore => ../../adapters/memstore
	github.com/mcpward/mcpward/adapters/oauth => ../../adapters/oauth
	github.com/mcpward/mcpward/adapters/pgstore => ../../adapters/pgstore
	github.com/mcpward/mcpward/adapters/stdiotransport => ../../adapters/stdiotransport
	github.com/mcpward/mcpward/composition => ../../composition
	github.com/mcpward/mcpward/conformance => ../../conformance
	github.com/mcpward/mcpward/core => ../../core
	github.com/mcpward/mcpward/ports => ../../ports
)
