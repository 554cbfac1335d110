# Run by walk.sh as gdb -batch -x gdb_walk.py --args BIN ARGS.
# Every entry into a function of mcperr's own crates (WALK_SYMS: "hexaddr name"
# lines from nm), from the first call of WALK_FROM to the next call of WALK_TO,
# as "addr<TAB>name" lines in WALK_OUT. WALK_MODE=first keeps first entries only.
# A PIE binary is loaded at gdb's fixed base (address randomization is off).
import gdb, os
out = open(os.environ["WALK_OUT"], "w")
syms = [l.split(" ", 1) for l in open(os.environ["WALK_SYMS"]).read().splitlines()]
start, stop = os.environ["WALK_FROM"], os.environ["WALK_TO"]
first_only = os.environ.get("WALK_MODE") == "first"
gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("starti", to_string=True)
base = 0x555555554000
names = {base + int(a, 16): n for a, n in syms}
by_name = {}
for a, n in names.items():
    by_name.setdefault(n, []).append(a)
for a in by_name[start]:
    gdb.execute(f"break *{a:#x}", to_string=True)
recording, n = False, 0
while True:
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        break
    if not gdb.selected_inferior().pid:
        break
    try:
        pc = gdb.selected_frame().pc()
    except gdb.error:
        break
    name = names.get(pc)
    if name is None:
        continue
    if not recording:
        gdb.execute("delete", to_string=True)
        for a in names:
            gdb.execute(f"break *{a:#x}", to_string=True)
        recording = True
    elif name == stop:
        break
    out.write(f"{pc - base:x}\t{name}\n")
    n += 1
    if first_only:
        gdb.execute(f"clear *{pc:#x}", to_string=True)
out.close()
print("entries:", n)
gdb.execute("kill", to_string=True)
