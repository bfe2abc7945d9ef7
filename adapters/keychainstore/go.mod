module github.com/mcpward/mcpward/adapters/keychainstore

go 1.26

require (
	github.com/99designs/keyring v1.2.2
	github.com/godbus/dbus v0.0.0-20190726142602-4481cbc300e2
	github.com/mcpward/mcpward/conformance v0.0.0
	github.com/mcpward/mcpward/core v0.0.0
	github.com/mcpward/mcpward/ports v0.0.0
	github.com/stretchr/testify v1.11.1
)

require (
	github.com/99designs/go-keychain v0.0.0-20191008050251-8e49817e8af4 // indirect
	github.com/danieljoos/wincred v1.1.2 // indirect
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/dvsekhvalnov/jose2go v1.5.0 // indirect
	github.com/gsterjov/go-libsecret v0.0.0-20161001094733-a6f4afe4910c // indirect
	github.com/mtibben/percent v0.2.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	golang.org/x/sys v0.3.0 // indirect
	golang.org/x/term v0.3.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace (
	github.com/mcpward/mcpward/conformance => ../../conformance
	github.com/mcpward/mcpward/core => ../../core
	github.com/mcpward/mcpward/ports => ../../ports
)
