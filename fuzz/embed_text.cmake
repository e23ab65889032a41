# cmake -DIN=FILE -DOUT=HEADER -DNAME=SYMBOL -P embed_text.cmake
# Writes HEADER with `static const char SYMBOL[]` holding FILE's bytes and a
# terminating NUL (a byte array: no escaping, any content).
file(READ "${IN}" _hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _bytes "${_hex}")
file(WRITE "${OUT}.tmp" "/* generated from ${IN} by embed_text.cmake; do not edit */\nstatic const char ${NAME}[] = {${_bytes}0};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
