# SPDX-License-Identifier: BSD-3-Clause
# Helpers of the CLI test scripts (test_cli.sh, test_cli_ba.sh, test_cli_loss.sh), sourced
# after SBM (the executable), TMP (a scratch folder) and the counters pass and fail are set;
# RUN, when set, prefixes each sbm command (test_cli.sh: a timeout).

ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL: $*"
}

# runs CMD... ; the command succeeds (output in $TMP/run.out, $TMP/run.err)
runs() {
    if ${RUN:-} "$SBM" "$@" >"$TMP/run.out" 2>"$TMP/run.err"; then
        return 0
    fi
    bad "sbm $* : exit $? : $(cat "$TMP/run.err")"
    return 1
}

# fails CODE SUBSTRING OUTFILE ARGS... : exit CODE, stderr contains SUBSTRING, OUTFILE (may be
# "-") does not exist afterwards
fails() {
    local code=$1 substr=$2 out=$3
    shift 3
    ${RUN:-} "$SBM" "$@" >"$TMP/f.out" 2>"$TMP/f.err"
    local got=$?
    if [ "$got" -ne "$code" ]; then
        bad "sbm $* : exit $got, expected $code; stderr: $(cat "$TMP/f.err")"
    elif ! grep -qF -- "$substr" "$TMP/f.err"; then
        bad "sbm $* : stderr lacks '$substr': $(cat "$TMP/f.err")"
    elif [ "$out" != "-" ] && [ -e "$out" ]; then
        bad "sbm $* : left $out behind"
    else
        ok
    fi
}
