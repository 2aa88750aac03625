#!/usr/bin/env bash
# Installs every system package RPMP needs to build, test and run, from Debian's
# repositories only. Idempotent: packages already present are skipped quickly.
# Usage: deploy/install-deps.sh        (as root, or with sudo available)
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libpmemobj-dev libpmem-dev pmdk-tools
  libfabric-dev libfabric-bin rdma-core libibverbs-dev librdmacm-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  etcd-server etcd-client
  catch2 libyaml-cpp-dev libssl-dev
  clang libclang-rt-14-dev
  iperf3 procps psmisc python3-venv hyperfine
  libcpp-httplib-dev prometheus dpkg-dev systemd adduser
  iproute2 util-linux openssl curl
  libhiredis-dev redis-server redis-tools
)
# Java and Maven come with the build machines; install Debian's when they are missing.
command -v javac >/dev/null 2>&1 || packages+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || packages+=(maven)
command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] || packages+=(golang-go)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} system packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
