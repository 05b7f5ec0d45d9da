#!/usr/bin/env bash
# Regenerates results.txt: seals, identities, cluster ids, the MAC key and the
# MACs of wire.md 12.B, computed by tools independent of our Go code.
#
#   apt-get install xxhash b3sum     # Debian packages: xxhsum -H3, b3sum
#   cd replica/wire/testdata/independent && ./generate.sh
#
# The inputs are built here from the byte layouts written out in wire.md
# (sections 2, 5, 6.2 and 12.B), not by our encoder; independent_test.go then
# checks that our encoder produces the same bytes and our hashes the same values.
# The tests never run this script and need neither tool.
set -euo pipefail
cd "$(dirname "$0")"

hexbin() { xxd -r -p > "$1"; }           # hexbin FILE < hex
z() { printf '%*s' $(( $1 * 2 )) '' | tr ' ' 0; }  # z N: N zero bytes in hex
cluster=21bb05c88727bab88d0ec27be8a72d46

# B1: XXH3 of the empty string and of "abc".
printf '' > empty.bin
printf 'abc' > abc.bin

# B4: the ForwardRegister fixture, whole header as wire.md 12.B4 writes it.
echo "8d1db6dc1ed285a8$(z 24)07000000000000000000000000000000000100000300000000000000 1a02$(z 66)feca00000000000000000000000000000df00000000000000000000000000000 29000000$(z 92)" | tr -d ' ' | hexbin b4-header.bin
tail -c 240 b4-header.bin > b4-seal-input.bin

# B5: minimal control headers (size 256 and command only): the seal input is
# header bytes 16..256, so size sits at 32 and the command at 44 of it.
for cmd in 07 09 0a 0b 0c 11; do
  echo "$(z 32)00010000$(z 8)${cmd}$(z 195)" | hexbin "b5-cmd$cmd-seal-input.bin"
done

# B6: the metadata Register prepare; its identity input is the header with
# checksum (0..16) and view (52..56) zero.
b6tail="c294d3380580062d$(z 8)${cluster}00010000$(z 8)0600$(z 66)3412$(z 46)01$(z 15)00401e18240a0600$(z 8)01$(z 14)8007$(z 31)"
echo "$(z 16)${b6tail}" | tr -d ' ' | hexbin b6-identity-input.bin
echo "e568ccb7330ed321$(z 8)${b6tail}" | hexbin b6-header.bin

# B7: a DoViewChange carrying B6 as its one suffix entry; the body is the B6
# header, the seal input is header bytes 16..256.
cp b6-header.bin b7-body.bin
echo "650651fd7fa4bcbf$(z 8)${cluster}0002000001000000000000000b01$(z 66)01$(z 22)80$(z 88)01$(z 15)" | hexbin b7-seal-input.bin

# B2: cluster names.
printf 'iggy-cluster' > cluster-iggy-cluster.txt
printf 'other' > cluster-other.txt

# B3: key derivation and the four MACs of Iggy's auth.rs transcript
# (cluster 0xDEADBEEF, dialer 3, acceptor 1, nonces 11x32 and 22x32).
printf '0123456789abcdef0123456789abcdef' > secret.txt
rep() { printf "%0.s$1" $(seq 1 "$2"); }  # rep HEXBYTE N
tag=$(printf 'apache-iggy replica-auth v1' | xxd -p | tr -d '\n')
prefix="${tag}efbeadde0000000000000000000000000301$(rep 11 32)$(rep 22 32)"
echo "${prefix}00$(z 32)02" | hexbin transcript-plaintext-acceptor.bin
echo "${prefix}00$(z 32)01" | hexbin transcript-plaintext-dialer.bin
echo "${prefix}01$(rep aa 32)02" | hexbin transcript-tls-acceptor.bin
echo "${prefix}01$(rep aa 32)01" | hexbin transcript-tls-dialer.bin

run() { echo "\$ $*"; bash -c "$*"; }
{
  echo "# Made by generate.sh with $(xxhsum --version 2>&1 | head -1 | sed 's/ by.*//') and $(b3sum --version)."
  echo "# Each '\$' line is the exact command; the line after it is what it printed."
  for f in empty.bin abc.bin b4-seal-input.bin b5-cmd07-seal-input.bin b5-cmd09-seal-input.bin \
           b5-cmd0a-seal-input.bin b5-cmd0b-seal-input.bin b5-cmd0c-seal-input.bin b5-cmd11-seal-input.bin \
           b6-identity-input.bin b7-body.bin b7-seal-input.bin; do
    run xxhsum -H3 "$f"
  done
  run b3sum cluster-iggy-cluster.txt
  run b3sum cluster-other.txt
  run b3sum --derive-key "'apache-iggy replica-auth v1 psk->mac-key'" secret.txt
  b3sum --derive-key 'apache-iggy replica-auth v1 psk->mac-key' --no-names secret.txt | xxd -r -p > mac-key.bin
  for t in plaintext-acceptor plaintext-dialer tls-acceptor tls-dialer; do
    run b3sum --keyed "transcript-$t.bin" "<" mac-key.bin
  done
} > results.txt
cat results.txt
