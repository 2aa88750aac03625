#!/bin/sh
# gen.sh: regenerate the Go code for proto/rpmp.proto into
# proxy/internal/rpmpv1. The output is committed, so building the proxy does
# not need protoc; run this only after editing the .proto.
#
# Needs protoc (>= 3.21) and the pinned Go plugins:
#   go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
#   go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
PATH="$PATH:$(go env GOPATH)/bin"
out="$here/internal/rpmpv1"
mkdir -p "$out"
protoc -I "$root/proto" \
	--go_out="$out" --go_opt=paths=source_relative \
	--go-grpc_out="$out" --go-grpc_opt=paths=source_relative \
	"$root/proto/rpmp.proto"
echo "generated into $out"
