#!/bin/bash
# A bare trace file with its configuration from options (issue 33 item 2): `etmkit dump
# --trace FILE` with what a snapshot's ini files would say, given as options, lists what the
# snapshot folder it came from lists. For one snapshot of every protocol of ../shared (ETMv4
# in frames and raw, ETMv4-M, ETE, PTM in frames and raw, STM, ITM raw and in frames, a
# DSTREAM capture; ETMv3 in the multi-source buffer below) the trace buffer file is listed
# three ways:
#  - "config": --config-from=SNAPSHOT:DEVICE (the device's type, registers and core type; the
#    framing from its buffer's format);
#  - "regs": --framing, --protocol, one --reg per [regs] line of the device file (the trace ID
#    register left out: --trace-id gives it), --arch from the core's type;
#  - "ini": --config-from=DEVICE.ini (the device file alone), --framing, --arch;
# with the core's [dumpN] files as --image FILE@ADDR, and compared byte for byte with the
# listing of the snapshot folder (--format=ocsd with the case's flags, text and JSON), the
# OCSD listing all but the two banner lines that name the input (checked apart: they name the
# file). A multi-source frames buffer (TC2: ETMv3, PTM, ITM on six trace IDs): each source
# alone (--config-from=DIR:DEVICE, and --reg/--trace-id) against a copy of the snapshot whose
# trace.ini keeps that source alone; and all of them (--config-from=DIR) against the snapshot.
# Also: one-line errors naming the option for missing, contradictory and bad options and files.
set -u
SH="${ETMKIT_SHARED:-$ETMKIT_SRC/../shared}/testdata/opencsd/snapshots"
if [ ! -d "$SH" ]; then
  echo "skip: $SH is absent (the shared hardware snapshots)"
  exit 77
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
E="$ETMKIT_BIN"
err() { # err TAG WANT_STATUS WANT_TEXT ARGS...
  local tag=$1 st=$2 want=$3
  shift 3
  "$E" "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  if [ $rc != "$st" ] || [ "$(wc -l <"$T/err")" != 1 ] || ! grep -qF -- "$want" "$T/err" || [ -s "$T/out" ]; then
    bad "$tag: exit $rc (want $st), stderr: $(head -3 "$T/err" | tr '\n' '|'), stdout $(wc -c <"$T/out") bytes"
  else
    ok "$tag: $(cat "$T/err")"
  fi
}

# ini FILE SECTION KEY: the value (first one)
ini() {
  awk -v s="$2" -v k="$3" '
    /^[ \t]*;/ { next }
    /^[ \t]*\[/ { sec = $0; gsub(/^[ \t]*\[|\][ \t\r]*$/, "", sec); next }
    tolower(sec) == tolower(s) {
      i = index($0, "="); if (!i) next
      key = substr($0, 1, i - 1); val = substr($0, i + 1)
      gsub(/^[ \t]+|[ \t\r]+$/, "", key); gsub(/^[ \t]+|[ \t\r]+$/, "", val)
      if (tolower(key) == tolower(k)) { print val; exit }
    }' "$1"
}
# keys FILE SECTION: "KEY=VALUE" lines of a section, key without its (...) attributes
keys() {
  awk -v s="$2" '
    /^[ \t]*;/ { next }
    /^[ \t]*\[/ { sec = $0; gsub(/^[ \t]*\[|\][ \t\r]*$/, "", sec); next }
    tolower(sec) == tolower(s) {
      i = index($0, "="); if (!i) next
      key = substr($0, 1, i - 1); val = substr($0, i + 1)
      sub(/\(.*$/, "", key); gsub(/^[ \t]+|[ \t\r]+$/, "", key); gsub(/^[ \t]+|[ \t\r]+$/, "", val)
      print key "=" val
    }' "$1"
}
# devfile DIR NAME: the device file of device NAME
devfile() {
  local f
  for f in $(keys "$1/snapshot.ini" device_list | cut -d= -f2-); do
    [ "$(ini "$1/$f" device name | tr a-z A-Z)" = "${2^^}" ] && { echo "$1/$f"; return; }
  done
}
# images DIR CORE_INI: --image FILE@ADDR for each [dumpN] (a copy of the used bytes when the
# section gives offset= or a length= short of the file)
images() {
  local sec file addr len off n=0
  for sec in $(grep -io '^\[dump[^]]*\]' "$2" | tr -d '[]'); do
    file=$(ini "$2" "$sec" file); addr=$(ini "$2" "$sec" address)
    len=$(ini "$2" "$sec" length); off=$(ini "$2" "$sec" offset)
    [ -r "$1/$file" ] || continue
    local size
    size=$(stat -c %s "$1/$file")
    off=$((${off:-0})); len=$((${len:-size - off}))
    if [ "$off" != 0 ] || [ "$len" != "$size" ]; then
      n=$((n + 1))
      tail -c +$((off + 1)) "$1/$file" | head -c "$len" >"$T/img.$n.$(basename "$file")"
      echo "--image $T/img.$n.$(basename "$file")@$addr"
    else
      echo "--image $1/$file@$addr"
    fi
  done
}
proto_of() {
  case "$1" in
    ETM4* | etm4*) echo etm4 ;; ETE*) echo ete ;; ETM3* | etm3*) echo etm3 ;;
    PTM* | PFT*) echo ptm ;; STM*) echo stm ;; ITM*) echo itm ;;
  esac
}
framing_of() {
  case "$1" in source_data) echo raw ;; dstream_coresight) echo dstream ;; *) echo frames ;; esac
}

# The options that describe source DEV of snapshot DIR ("regs" form), on stdout one per line.
reg_opts() {
  local dir=$1 dev=$2 df type core cf id line name
  df=$(devfile "$dir" "$dev")
  type=$(ini "$df" device type)
  echo "--protocol=$(proto_of "$type")"
  id=
  while IFS= read -r line; do
    name=${line%%=*}
    case "${name^^}" in
      TRCTRACEIDR | ETMTRACEIDR) id=$((${line#*=} & 0x7f)) ;;
      STMTCSR | ITMTCR) id=$(((${line#*=} >> 16) & 0x7f)); echo "--reg=$line" ;;
      *) echo "--reg=$line" ;;
    esac
  done < <(keys "$df" regs)
  [ -n "$id" ] && printf -- '--trace-id=0x%x\n' "$id"
  core=$(keys "$dir/trace.ini" core_trace_sources | awk -F= -v d="$dev" 'toupper($2) == toupper(d) { print $1; exit }')
  if [ -n "$core" ]; then
    cf=$(devfile "$dir" "$core")
    echo "--arch=$(ini "$cf" device type)"
  fi
}
core_images() {
  local dir=$1 dev=$2 core
  core=$(keys "$dir/trace.ini" core_trace_sources | awk -F= -v d="$dev" 'toupper($2) == toupper(d) { print $1; exit }')
  [ -n "$core" ] && images "$dir" "$(devfile "$dir" "$core")"
}

# compare TAG WANT GOT TRACEFILE: all but the banner; the banner names the file
compare() {
  local tag=$1 want=$2 got=$3 file=$4
  if [ ! -s "$want" ]; then
    bad "$tag: the snapshot's listing is empty"
    return
  fi
  if [ "$5" = ocsd ]; then
    if [ "$(sed -n 2p "$got")" != "Using $(basename "$file") as trace source" ] ||
      [ "$(sed -n 1p "$got")" != "Trace Packet Lister : reading snapshot from path $file" ]; then
      bad "$tag: banner: $(head -2 "$got" | tr '\n' '|')"
      return
    fi
    if cmp -s <(tail -n +3 "$want") <(tail -n +3 "$got"); then
      ok "$tag ($(wc -l <"$want") lines)"
    else
      bad "$tag: differs: $(diff <(tail -n +3 "$want") <(tail -n +3 "$got") | head -4 | tr '\n' '|')"
    fi
  elif cmp -s "$want" "$got"; then
    ok "$tag ($(wc -l <"$want") lines)"
  else
    bad "$tag: differs: $(diff "$want" "$got" | head -4 | tr '\n' '|')"
  fi
}

# alone DIR DEV: DIR, or when DEV shares its buffer with other sources, a copy of DIR whose
# trace.ini keeps DEV alone in [source_buffers]
alone() {
  local dir=$1 dev=$2 red="$T/alone-$(basename "$1")-$2" f
  if [ "$(keys "$dir/trace.ini" source_buffers | wc -l)" = 1 ]; then
    echo "$dir"
    return
  fi
  mkdir -p "$red"
  for f in "$dir"/*; do ln -sf "$f" "$red/"; done
  rm "$red/trace.ini"
  awk -v d="$dev" '/^\[/ { sec = $0 }
    sec == "[source_buffers]" && /=/ && toupper(substr($0, 1, length(d) + 1)) != toupper(d "=") { next }
    { print }' "$dir/trace.ini" >"$red/trace.ini"
  echo "$red"
}

# case SNAPSHOT DEVICE FLAGS...: both forms against the snapshot folder, ocsd and text
run_case() {
  local name=$1 dev=$2
  shift 2
  local dir="$SH/$name" buf file fmt
  [ -d "$dir" ] || { bad "$name: no such snapshot"; return; }
  buf=$(keys "$dir/trace.ini" source_buffers | awk -F= -v d="$dev" 'toupper($1) == toupper(d) { print $2; exit }')
  local sec
  for sec in $(ini "$dir/trace.ini" trace_buffers buffers | tr ',' ' '); do
    [ "$(ini "$dir/trace.ini" "$sec" name | tr a-z A-Z)" = "${buf^^}" ] && break
  done
  file="$dir/$(ini "$dir/trace.ini" "$sec" file)"
  fmt=$(ini "$dir/trace.ini" "$sec" format)
  local -a img regs
  mapfile -t img < <(core_images "$dir" "$dev" | tr ' ' '\n')
  mapfile -t regs < <(reg_opts "$dir" "$dev")
  local f
  local ref
  ref=$(alone "$dir" "$dev")
  for f in ocsd text json; do
    "$E" dump --format=$f "$@" "$ref" >"$T/want" 2>"$T/want.err"
    "$E" dump --format=$f "$@" --trace "$file" --config-from="$dir:$dev" "${img[@]}" \
      >"$T/got" 2>"$T/got.err" || bad "$name config $f: exit $?: $(head -2 "$T/got.err")"
    compare "$name $dev $f $* (--config-from)" "$T/want" "$T/got" "$file" $f
    "$E" dump --format=$f "$@" --trace "$file" --framing="$(framing_of "$fmt")" "${regs[@]}" \
      "${img[@]}" >"$T/got" 2>"$T/got.err" || bad "$name regs $f: exit $?: $(head -2 "$T/got.err")"
    compare "$name $dev $f $* (${#regs[@]} options: ${regs[*]:0:3} ..)" "$T/want" "$T/got" "$file" $f
    # the device file alone, the core's type as --arch
    "$E" dump --format=$f "$@" --trace "$file" --framing="$(framing_of "$fmt")" \
      --config-from="$(devfile "$dir" "$dev")" $(printf '%s\n' "${regs[@]}" | grep -e '^--arch=') \
      "${img[@]}" >"$T/got" 2>"$T/got.err" || bad "$name ini $f: exit $?: $(head -2 "$T/got.err")"
    compare "$name $dev $f $* (--config-from=$(basename "$(devfile "$dir" "$dev")"))" "$T/want" "$T/got" "$file" $f
  done
}

run_case juno-uname-001 ETM_0 --decode                 # ETMv4, frames
run_case init-short-addr CSETM_0 --pkt-mon               # ETMv4, raw
run_case armv8_1m_branches ETM_0 --decode              # ETMv4 on Cortex-M55 (ETMv4-M), raw
run_case ete_ip ETE_0_s1 --decode                         # ETE, raw
run_case Snowball PTM_1 --decode                       # PTM, frames (of two sources)
run_case trace_cov_a15 PTM_0_2 --decode                # PTM (PFT1.1), raw
run_case stm_only STM_0 --decode                       # STM, frames
run_case itm_only_raw ITM_0 --decode                   # ITM, raw
run_case itm_only_csformat ITM_0 --decode              # ITM, frames
run_case a55-test-tpiu CSETM_0 --dstream --raw-packed --raw-unpacked # DSTREAM capture

# --framing=tpiu / tpiu-hsync: the snapshot's frames read with --tpiu / --tpiu-hsync
j="$SH/juno-uname-001"
for t in tpiu tpiu-hsync; do
  "$E" dump --format=ocsd --$t "$j" >"$T/want" 2>/dev/null
  "$E" dump --format=ocsd --trace "$j/uname_trace.bin" --config-from="$j:ETM_0" --framing=$t \
    >"$T/got" 2>"$T/got.err" || bad "--framing=$t: $(head -2 "$T/got.err")"
  compare "juno-uname-001 --framing=$t as --$t" "$T/want" "$T/got" "$j/uname_trace.bin" ocsd
  [ "$(wc -l <"$T/got")" -lt 100 ] || bad "--framing=$t: the frames are not read as TPIU frames"
done

# A TPIU capture: Snowball's frames behind an FSYNC, in a copy of the snapshot (dump --tpiu),
# and as a session (script): the samples of the snapshot folder
sb="$SH/Snowball"
tp="$T/snowball-tpiu"
mkdir -p "$tp"
for f in "$sb"/*; do ln -s "$f" "$tp/"; done
rm "$tp/cstrace.bin"
{ printf '\377\377\377\177'; cat "$sb/cstrace.bin"; } >"$tp/cstrace.bin"
"$E" dump --format=ocsd --decode --tpiu "$tp" >"$T/want" 2>/dev/null
"$E" dump --format=ocsd --decode --trace "$tp/cstrace.bin" --config-from="$sb" --framing=tpiu \
  --image "$sb/kernel_dump.bin@0xC0008000" >"$T/got" 2>"$T/got.err" || bad "tpiu: $(head -2 "$T/got.err")"
compare "Snowball as a TPIU capture, dump --framing=tpiu" "$T/want" "$T/got" "$tp/cstrace.bin" ocsd
[ "$(wc -l <"$T/got")" -gt 1000 ] || bad "Snowball as a TPIU capture: $(wc -l <"$T/got") lines"
"$E" script -F tid,flags,ip,addr "$sb" >"$T/want" 2>/dev/null
"$E" script -F tid,flags,ip,addr --trace "$tp/cstrace.bin" --config-from="$sb" --framing=tpiu \
  --image "$sb/kernel_dump.bin@0xC0008000" >"$T/got" 2>"$T/got.err" || bad "script tpiu: exit $?"
[ "$(wc -l <"$T/want")" -gt 1000 ] || bad "script on Snowball: $(wc -l <"$T/want") samples"
compare "Snowball as a TPIU capture, script --framing=tpiu" "$T/want" "$T/got" "" text

# ---- a multi-source frames buffer: each trace ID alone, and all of them --------------------
tc2="$SH/TC2"
for dev in ETM_0 PTM_1 ITM_0; do
  red=$(alone "$tc2" "$dev")
  mapfile -t img < <(core_images "$tc2" "$dev" | tr ' ' '\n')
  mapfile -t regs < <(reg_opts "$tc2" "$dev")
  "$E" dump --format=ocsd --decode "$red" >"$T/want" 2>/dev/null
  grep -q "Protocol printer" "$T/want" && [ "$(grep -c 'Protocol printer' "$T/want")" = 1 ] ||
    bad "TC2 $dev: the reduced snapshot lists $(grep -c 'Protocol printer' "$T/want") sources"
  "$E" dump --format=ocsd --decode --trace "$tc2/cstrace.bin" --config-from="$tc2:$dev" \
    "${img[@]}" >"$T/got" 2>"$T/got.err" || bad "TC2 $dev config: $(head -2 "$T/got.err")"
  compare "TC2 $dev alone (--config-from)" "$T/want" "$T/got" "$tc2/cstrace.bin" ocsd
  "$E" dump --format=ocsd --decode --trace "$tc2/cstrace.bin" --framing=frames "${regs[@]}" \
    "${img[@]}" >"$T/got" 2>"$T/got.err" || bad "TC2 $dev regs: $(head -2 "$T/got.err")"
  compare "TC2 $dev alone (${regs[*]:0:1} .. ${regs[*]: -2})" "$T/want" "$T/got" "$tc2/cstrace.bin" ocsd
done
"$E" dump --format=ocsd "$tc2" >"$T/want" 2>/dev/null
"$E" dump --format=ocsd --trace "$tc2/cstrace.bin" --config-from="$tc2" >"$T/got" 2>"$T/got.err" ||
  bad "TC2 all: $(head -2 "$T/got.err")"
compare "TC2 all six sources (--config-from=DIR)" "$T/want" "$T/got" "$tc2/cstrace.bin" ocsd

# ---- the commands that read snapshots as sessions: script, doctor, export --------------------
# examples/etm4-hello (its code given with --image to both, so the samples name the same files)
ex="$ETMKIT_SRC/examples/etm4-hello"
ximg=(--image "$ex/user.bin@0x401000" --image "$ex/kernel.bin@0xFFFFFF8008082400")
xbare=(--trace "$ex/trace.bin" --config-from="$ex:ETM_0")
"$E" script -F tid,cpu,time,flags,ip,dso,addr "${ximg[@]}" "$ex" >"$T/want" 2>/dev/null
"$E" script -F tid,cpu,time,flags,ip,dso,addr "${ximg[@]}" "${xbare[@]}" >"$T/got" 2>"$T/got.err" ||
  bad "script --trace: exit $?: $(head -2 "$T/got.err")"
[ "$(wc -l <"$T/want")" = 14 ] || bad "script on $ex: $(wc -l <"$T/want") samples, not 14"
compare "script --trace (etm4-hello)" "$T/want" "$T/got" "$ex/trace.bin" text
"$E" script -F tid,cpu,time,flags,ip,dso,addr "${ximg[@]}" --trace "$ex/trace.bin" --framing=raw \
  $(reg_opts "$ex" ETM_0) >"$T/got" 2>"$T/got.err" || bad "script --reg: exit $?: $(head -2 "$T/got.err")"
compare "script --trace with --reg options (etm4-hello)" "$T/want" "$T/got" "$ex/trace.bin" text
# (the count of notes differs: reading the folder's ini files notes the defaulted registers)
"$E" doctor "${ximg[@]}" "$ex" | tail -n +2 | grep -v 'notes\?, not' >"$T/want"
"$E" doctor "${ximg[@]}" "${xbare[@]}" >"$T/got.all" 2>"$T/got.err" || bad "doctor --trace: exit $?"
tail -n +2 "$T/got.all" | grep -v 'notes\?, not' | sed 's/ trace\.bin  / ETR_0      /' >"$T/got"
compare "doctor --trace (all but its first line; the buffer named as the file)" "$T/want" "$T/got" "" text
[ "$(head -1 "$T/got.all" | cut -d, -f1)" = "$ex/trace.bin: trace file (configured by options)" ] ||
  bad "doctor --trace: first line $(head -1 "$T/got.all")"
"$E" doctor --format=json "${xbare[@]}" 2>/dev/null | grep -q '"configured_by_options":true' &&
  ! "$E" doctor --format=json "$ex" 2>/dev/null | grep -q configured_by_options &&
  ok "doctor --format=json says configured_by_options for --trace alone" ||
  bad "doctor --format=json: configured_by_options"
"$E" export "${ximg[@]}" -o "$T/want" "$ex" 2>/dev/null
"$E" export "${ximg[@]}" -o "$T/got" "${xbare[@]}" 2>"$T/got.err" || bad "export --trace: exit $?"
compare "export --trace (autofdo)" "$T/want" "$T/got" "" text
err "script, --framing=raw and two sources" 2 "script: --framing=raw carries one source's trace, but 2" script "${xbare[@]}" --protocol=itm
err "script, two inputs" 2 "script: give one input: --trace $ex/trace.bin or $ex" script "${xbare[@]}" "$ex"
err "doctor, no configuration" 2 "doctor: --trace $ex/trace.bin needs its configuration" doctor --trace "$ex/trace.bin"
err "inject" 1 "inject: $ex/trace.bin is a trace file described by options" inject "${xbare[@]}" -o "$T/x.data"

# ---- errors: one line naming the option ---------------------------------------------------
j="$SH/juno-uname-001"
e() { local tag=$1 st=$2 want=$3; shift 3; err "$tag" "$st" "$want" dump "$@"; }
e "no configuration" 2 "needs its configuration: --protocol" --trace "$j/uname_trace.bin"
e "no --trace" 2 "--protocol describes a bare trace file: give the file with --trace FILE" --protocol=etm4 --reg TRCIDR0=1
e "no framing" 2 "needs --framing" --trace "$j/uname_trace.bin" --protocol=etm4 --trace-id=0x10
e "bad framing" 2 "--framing=tpu: not raw" --trace "$j/uname_trace.bin" --framing=tpu --protocol=etm4
e "two framings" 2 "--framing=raw contradicts --framing=frames" --trace "$j/uname_trace.bin" --framing=frames --framing=raw
e "raw and --tpiu" 2 "--tpiu contradicts --framing=raw" --trace "$j/uname_trace.bin" --framing=raw --tpiu --protocol=etm4
e "raw, two sources" 2 "--framing=raw carries one source's trace, but 2 sources" --trace "$j/uname_trace.bin" --framing=raw --protocol=etm4 --protocol=itm
e "frames without an ID" 2 "needs --trace-id" --trace "$j/uname_trace.bin" --framing=frames --protocol=etm4 --reg TRCIDR0=0x28000EA1
e "no TRCIDR2" 2 "source 1 (--protocol ETM4) needs --reg TRCIDR2=VALUE" --trace "$j/uname_trace.bin" --framing=frames --protocol=etm4 --trace-id=0x10 --reg TRCIDR0=0x28000EA1 --reg TRCCONFIGR=0
e "no ETMCCER" 2 "source 1 (--protocol PTM1.1) needs --reg ETMCCER=VALUE" --trace "$j/uname_trace.bin" --framing=raw --protocol=ptm --reg ETMCR=0 --reg ETMIDR=0x411CF301
e "two sources, one ID" 2 "both have trace ID 0x10" --trace "$j/uname_trace.bin" --framing=frames --config-from="$j:ETM_0" --protocol=itm --trace-id=0x10
e "bad protocol" 2 "--protocol=etm5: not etm4" --trace "$j/uname_trace.bin" --protocol=etm5
e "bad --reg" 2 "--reg TRCIDR0: not NAME=VALUE" --trace "$j/uname_trace.bin" --protocol=etm4 --reg TRCIDR0
e "bad --reg value" 2 "--reg TRCIDR0=zz: not NAME=VALUE" --trace "$j/uname_trace.bin" --protocol=etm4 --reg TRCIDR0=zz
e "bad trace ID" 2 "--trace-id=0x80: not a trace ID" --trace "$j/uname_trace.bin" --protocol=etm4 --trace-id=0x80
e "two trace IDs" 2 "--trace-id=0x11 contradicts --trace-id=0x10" --trace "$j/uname_trace.bin" --protocol=etm4 --trace-id=0x10 --trace-id=0x11
e "bad arch" 2 "--arch=Cortex-Z9: not a known core" --trace "$j/uname_trace.bin" --protocol=etm4 --arch=Cortex-Z9
e "--reg before --protocol" 2 "--reg before --protocol or --config-from" --trace "$j/uname_trace.bin" --framing=raw --reg TRCIDR0=1
e "config-from not a snapshot" 2 "--config-from=$T: " --trace "$j/uname_trace.bin" --config-from="$T"
e "config-from no device" 2 "ETM_9 is not a trace source of the snapshot (ETM_0)" --trace "$j/uname_trace.bin" --config-from="$j:ETM_9"
e "config-from DIR, --trace-id" 2 "--trace-id: --config-from=DIR gave several trace sources" --trace "$j/uname_trace.bin" --config-from="$tc2" --trace-id=3
e "two inputs" 2 "give one input: --trace $j/uname_trace.bin or $j" --trace "$j/uname_trace.bin" --config-from="$j" "$j"
e "options, file not with --trace" 2 "dump: --framing describes a bare trace file: give the file with --trace $j/uname_trace.bin" --framing=raw "$j/uname_trace.bin"
err "script: options, file not with --trace" 2 "script: --protocol describes a bare trace file: give the file with --trace $ex/trace.bin" script --protocol=etm4 "$ex/trace.bin"
e "config-from a core's file" 2 "cpu_0.ini: not a trace source's device file" --trace "$j/uname_trace.bin" --config-from="$j/cpu_0.ini"
e "missing file" 1 "--trace $T/none.bin: No such file or directory" --trace "$T/none.bin" --config-from="$j"
e "a folder" 1 "--trace $j: is a folder, not a trace file" --trace "$j" --config-from="$j:ETM_0"
: >"$T/empty.bin"
"$E" dump --format=ocsd --trace "$T/empty.bin" --config-from="$j" >"$T/out" 2>"$T/err"
if grep -q "processed 0 bytes" "$T/out"; then ok "an empty file: 0 bytes processed (exit $?)"; else bad "empty file: $(head -3 "$T/out" "$T/err")"; fi

exit $fail
