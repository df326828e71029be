#!/usr/bin/env bash
# make check-gtk: the GTK 4 example app (Examples/GtkRecipes) for real, on a private daemon and a private X server.
#
# Two copies of the app show the same window; a change typed into either (a keyboard shortcut, sent with xdotool)
# and a change made with the CLI show in both copies' window titles; a window closed cleanly comes back as it was,
# and one whose process was killed while it showed a recipe comes back at its root. It also saves a screenshot of the
# two copies side by side (GTK_SCREENSHOT; by default in the example's build folder, so that a check changes no file of
# the repository: `make check-gtk GTK_SCREENSHOT=docs/images/gtk-recipes.png` refreshes the README's).
#
# Every wait polls a condition with a deadline; every process started here is stopped at the end, whatever happens.
# Usage: scripts/check-gtk.sh (the Makefile passes SCENESYNC_BIN, the release binaries, and GTK_RECIPES, the app).
set -Eeuo pipefail
cd "$(dirname "$0")/.."
bin=${SCENESYNC_BIN:-.build-release/release}
app=${GTK_RECIPES:-Examples/GtkRecipes/.build/debug/GtkRecipes}
screenshot=${GTK_SCREENSHOT:-Examples/GtkRecipes/.build/gtk-recipes.png}
tag=GtkRecipes.Route
for tool in "$bin/scenesyncd" "$bin/scenesync" "$app"; do
    [ -x "$tool" ] || { echo "check-gtk: $tool is missing: run make check-gtk" >&2; exit 1; }
done
for tool in Xvfb xdotool import convert; do
    command -v "$tool" >/dev/null || { echo "check-gtk: $tool is missing: scripts/install-deps.sh gtk" >&2; exit 1; }
done

work=$(mktemp -d /tmp/check-gtk.XXXXXX)
started=()   # every process started here, in order; stopped in the reverse order
passed=0
scene=""

# A process that has ended: no longer there, or a zombie that is not reaped yet.
gone() { [ ! -e "/proc/$1" ] || [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" = Z ]; }

# Stops a process: SIGTERM, then SIGKILL if it is still there after 10 s (an app closing its windows reports their
# background phase first, which takes a moment), and reaps it.
stop() {
    local pid=$1 deadline=$((SECONDS + 10))
    kill "$pid" 2>/dev/null || return 0
    while ! gone "$pid" && [ $SECONDS -lt $deadline ]; do
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

cleanup() {
    local status=$?
    trap - EXIT ERR
    for ((i = ${#started[@]} - 1; i >= 0; i--)); do stop "${started[i]}"; done
    if [ $status -ne 0 ]; then
        for log in "$work"/*.log; do
            if [ -s "$log" ]; then echo "--- $(basename "$log")" && tail -n 30 "$log"; fi
        done >&2
    fi
    rm -rf "$work"
    exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
# Any other command that fails ends the run the same way, with its line.
trap 'fail "line $LINENO: $BASH_COMMAND"' ERR

# The result line, then the exit status: the first failed check ends the run (later checks build on it).
fail() {
    echo "check-gtk: FAILED: $*" >&2
    echo "check-gtk: $passed passed, 1 failed"
    exit 1
}

pass() {
    passed=$((passed + 1))
    echo "check-gtk: ok: $*"
}

# wait_until SECONDS WHAT COMMAND...: runs COMMAND every 0.1 s until it succeeds; fails the check after SECONDS.
wait_until() {
    local limit=$1 what=$2 deadline=$((SECONDS + $1))
    shift 2
    until "$@"; do
        [ $SECONDS -lt $deadline ] || fail "$what (not within ${limit} s)"
        sleep 0.1
    done
}

# The private daemon, on temp directories and an empty configuration (not /etc/scenesync's).
mkdir -p "$work/runtime"
chmod 700 "$work/runtime"
echo "# check-gtk: every key at its default" >"$work/scenesyncd.yaml"
export SCENESYNC_SOCKET="$work/scenesync.sock"
"$bin/scenesyncd" --config "$work/scenesyncd.yaml" --scenes-dir "$work/scenes" --state-dir "$work/state" \
    --socket "$SCENESYNC_SOCKET" >"$work/daemon.log" 2>&1 &
started+=($!)
wait_until 30 "the daemon answers on $SCENESYNC_SOCKET" "$bin/scenesync" status >/dev/null 2>&1

# Every phase the apps report, as the daemon tells its subscribers.
"$bin/scenesync" watch 'com.example.GtkRecipes.*' --json >"$work/watch.log" 2>&1 &
started+=($!)

# A private X server on a display it picks itself (-displayfd), with no window manager. -noreset: by default an X
# server starts over when its last client leaves, and refuses connections while it does, so that a copy started
# right after the only other one was killed could not open the display.
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp -noreset 3>"$work/display" 2>"$work/xvfb.log" &
started+=($!)
wait_until 30 "Xvfb starts" test -s "$work/display"
export DISPLAY=":$(head -n 1 "$work/display")"

# One copy of the app: GTK on X11 with the software renderer, no accessibility bus, settings in memory.
# Sets $copy to its process ID and $copy_log to its output.
launch=0
start_copy() {
    launch=$((launch + 1))
    copy_log="$work/copy-$launch.log"
    env GDK_BACKEND=x11 GSK_RENDERER=cairo GTK_A11Y=none NO_AT_BRIDGE=1 GSETTINGS_BACKEND=memory \
        XDG_RUNTIME_DIR="$work/runtime" "$app" >"$copy_log" 2>&1 &
    copy=$!
    started+=($copy)
}

visible_window() { [ -n "$(xdotool search --onlyvisible --pid "$1" 2>/dev/null)" ]; }
# Sets $window to the window of the copy $1 (each copy shows one here), once it is on the screen.
find_window() {
    wait_until 30 "a window of process $1" visible_window "$1"
    window=$(xdotool search --onlyvisible --pid "$1" | head -n 1)
}
title_of() { xdotool getwindowname "$1" 2>/dev/null || true; }
# wait_for_title WINDOW TITLE WHAT: within 15 s.
wait_for_title() {
    local deadline=$((SECONDS + 15))
    until [ "$(title_of "$1")" = "$2" ]; do
        [ $SECONDS -lt $deadline ] || fail "$3 shows \"$(title_of "$1")\", not \"$2\" (after 15 s)"
        sleep 0.1
    done
}
# Real key presses (XTEST) into a window, focused first: there is no window manager to do it.
press() { timeout 10 xdotool windowfocus --sync "$1" key --clearmodifiers "$2" || fail "typing $2 into window $1"; }
count() { grep -c -- "$1" "$2" || true; }
scene_has() { [[ "$("$bin/scenesync" get "$scene" --json 2>/dev/null)" == *"$1"* ]]; }

# 1. The first copy opens a new window, and goes to a recipe (Ctrl+R, typed into it). The second copy, started
# then, opens the same window at that recipe: the window is active because the first copy shows it, not because it
# crashed.
start_copy
a=$copy a_log=$copy_log
find_window "$a"
window_a=$window
wait_for_title "$window_a" Recipes "the first copy's new window"
wait_until 15 "the first copy creates its scene" grep -q '^opening a new window, ' "$a_log"
scene=$(sed -n 's/^opening a new window, //p' "$a_log")
wait_until 15 "the scene $scene exists" "$bin/scenesync" get "$scene" >/dev/null 2>&1
press "$window_a" ctrl+r
wait_for_title "$window_a" "Recipe 1" "the first copy, after Ctrl+R in it,"
wait_until 15 "the recipe reaches the daemon" scene_has '"id":1'
start_copy
b=$copy b_log=$copy_log
find_window "$b"
window_b=$window
wait_for_title "$window_b" "Recipe 1" "the second copy's window"
grep -q "^reopening $scene " "$b_log" || fail "the second copy did not open $scene"
pass "two copies show one window, $scene"

# 2. Keys typed into one copy's window show in both.
press "$window_b" ctrl+r
wait_for_title "$window_b" "Recipe 2" "the second copy, after Ctrl+R in it,"
wait_for_title "$window_a" "Recipe 2" "the first copy, after Ctrl+R in the second,"
press "$window_a" alt+Left
wait_for_title "$window_a" "Recipe 1" "the first copy, after Alt+Left (Back) in it,"
wait_for_title "$window_b" "Recipe 1" "the second copy, after Alt+Left (Back) in the first,"
press "$window_a" ctrl+r
wait_for_title "$window_b" "Recipe 2" "the second copy, after Ctrl+R in the first,"
wait_for_title "$window_a" "Recipe 2" "the first copy, after Ctrl+R in it,"
pass "Ctrl+R and Alt+Left in either copy show in both"

# 3. A change made with the CLI shows in both.
"$bin/scenesync" push "$scene" '{"settings":{}}' --type "$tag" >/dev/null
wait_for_title "$window_a" Settings "the first copy, after scenesync push,"
wait_for_title "$window_b" Settings "the second copy, after scenesync push,"
# A level of a newer version, a case this one does not know, shows as "Unknown page" rather than failing.
"$bin/scenesync" push "$scene" '{"favorites":{}}' --type "$tag" >/dev/null
wait_for_title "$window_a" "Unknown page" "the first copy, after pushing a case it does not know,"
wait_for_title "$window_b" "Unknown page" "the second copy, after pushing a case it does not know,"
"$bin/scenesync" pop "$scene" >/dev/null
wait_for_title "$window_a" Settings "the first copy, after scenesync pop,"
wait_for_title "$window_b" Settings "the second copy, after scenesync pop,"
pass "scenesync push and pop show in both copies, a case the app does not know as \"Unknown page\""

# The screenshot: the two windows side by side, each grabbed by itself (no window manager, so nothing overlaps
# once they are apart), on a light frame.
eval "$(xdotool getwindowgeometry --shell "$window_a")"
xdotool windowmove --sync "$window_a" 0 0
xdotool windowmove --sync "$window_b" $((WIDTH + 40)) 0
import -window "$window_a" "$work/a.png"
import -window "$window_b" "$work/b.png"
mkdir -p "$(dirname "$screenshot")"
convert "$work/a.png" "$work/b.png" -bordercolor '#deddda' -border 16 +append -strip \
    -define png:compression-level=9 "$screenshot"

# 4. Closing windows cleanly (Ctrl+W in one copy, SIGTERM, the app's quit, in the other) reports the background
# phase, and the next launch reopens the window as it was; a level that is not a route at all (another tag, pushed
# while no copy runs) is left out with what is above it (the .keepPrefix policy).
backgrounds=$(count '"phase":"background"' "$work/watch.log")
press "$window_b" ctrl+w
wait_until 15 "the second copy exits after Ctrl+W closed its only window" gone "$b"
stop "$a"
gone "$a" || fail "the first copy did not quit on SIGTERM"
wait_until 15 "both copies report the background phase" \
    test "$(count '"phase":"background"' "$work/watch.log")" -ge $((backgrounds + 2))
"$bin/scenesync" push "$scene" 42 --type Swift.Int >/dev/null
actives=$(count '"phase":"active"' "$work/watch.log")
start_copy
a=$copy a_log=$copy_log
find_window "$a"
window_a=$window
wait_for_title "$window_a" Settings "the window reopened after a clean close"
grep -q "left out level 3: Swift.Int 42" "$a_log" || fail "the reopened window did not leave out the Swift.Int on top"
pass "a window closed cleanly reopens as it was, without the level that is not a route"

# 5. A copy killed while its window is active, at a recipe: the next launch reopens that window at its root.
press "$window_a" ctrl+r
wait_for_title "$window_a" "Recipe 3" "the reopened window, after Ctrl+R,"
wait_until 15 "the recipe reaches the daemon" scene_has '"id":3'
wait_until 15 "the reopened window reports the active phase" \
    test "$(count '"phase":"active"' "$work/watch.log")" -ge $((actives + 1))
kill -KILL "$a"
wait "$a" 2>/dev/null || true   # reaped quietly: bash would report the kill
start_copy
a=$copy a_log=$copy_log
find_window "$a"
window_a=$window
wait_for_title "$window_a" Recipes "the window of the killed copy, reopened,"
wait_until 15 "the reopened window's scene is back at its root" scene_has '"path":[]'
pass "a window whose process was killed reopens at its root"

# 6. Quitting reports the background phase and ends the app.
stop "$a"
grep -q "^closed $scene: background\$" "$a_log" || fail "quitting did not report the background phase"
pass "quitting reports the background phase"

echo "check-gtk: screenshot in $screenshot"
echo "check-gtk: $passed passed, 0 failed"
