# bench/plots.gp - the PNG plots of bench/results/latest.md.
# Called by bench/report.py:  gnuplot -e "raw='DIR/raw'; out='DIR'; stamp='...'" bench/plots.gp
# Reads raw/*.dat written by report.py; a missing data file gives no plot.

set terminal pngcairo size 900,560 font "DejaVu Sans,10"
set grid
set key top left
set title font ",9"

fexists(f) = system("test -s '".f."' && echo 1 || echo 0") + 0

# 1. hook cost per event vs modules
if (fexists(raw.'/hooks.dat')) {
    set output out.'/hooks.png'
    set title "Control-plane cost per hook event (CPU ns, median)\n".stamp noenhanced
    set logscale xy
    set xlabel "modules"
    set ylabel "ns per event"
    set xrange [50:200000]
    set key bottom right
    plot raw.'/hooks.dat' using 1:2 with linespoints lw 2 pt 7 title "zoffload (C)", \
         '' using 1:3 with linespoints lw 2 pt 5 title "PyTorch hooks, whole step", \
         '' using 1:4 with linespoints lw 2 pt 9 title "PyTorch hooks only (with - without)"
    unset logscale
    unset xrange
    set key top left
}

# 2. gather / memcpy vs size
if (fexists(raw.'/gather_w1.dat')) {
    set output out.'/gather.png'
    set title "Host all-gather throughput / memcpy (median ratio)\n".stamp noenhanced
    set logscale x 2
    set xlabel "parameter bytes"
    set ylabel "ratio to memcpy"
    set yrange [0:*]
    set xtics ("4 KiB" 4096, "16 KiB" 16384, "64 KiB" 65536, "256 KiB" 262144, "1 MiB" 1048576, \
               "4 MiB" 4194304, "16 MiB" 16777216, "64 MiB" 67108864, "256 MiB" 268435456)
    set xrange [3000:360000000]
    set key outside right
    plot raw.'/gather_w1.dat' using 1:2 with linespoints lw 2 pt 7 title "backend W=1", \
         raw.'/gather_w8.dat' using 1:2 with linespoints lw 2 pt 7 title "backend W=8", \
         raw.'/gather_w64.dat' using 1:2 with linespoints lw 2 pt 7 title "backend W=64", \
         raw.'/gather_w1.dat' using 1:3 with linespoints lw 1 dt 2 pt 5 title "runtime path W=1", \
         raw.'/gather_w8.dat' using 1:3 with linespoints lw 1 dt 2 pt 5 title "runtime path W=8", \
         raw.'/gather_w64.dat' using 1:3 with linespoints lw 1 dt 2 pt 5 title "runtime path W=64", \
         0.8 with lines lc rgb "red" dt 3 title "goal 0.8"
    unset logscale
    set xtics autofreq
    unset xrange
    set key inside top left
    set yrange [*:*]
}

# 3. fuzzing speed
if (fexists(raw.'/fuzzspeed.dat')) {
    set output out.'/fuzzspeed.png'
    set title "Fuzzing speed (exec/s)\n".stamp noenhanced
    set style data histogram
    set style histogram cluster gap 1
    set style fill solid 0.8 border -1
    set logscale y
    set ylabel "exec/s"
    set xlabel ""
    set key top right
    plot raw.'/fuzzspeed.dat' using 3:xtic(2) title "libFuzzer ASan+UBSan", \
         '' using 4 title "libFuzzer -O2", \
         '' using 5 title "AFL++ -O2"
    unset logscale
    set style data points
}

# 4. time-to-bug RMST with 95% interval
if (fexists(raw.'/ttb.dat')) {
    set output out.'/ttb.png'
    set title "Time-to-bug: restricted mean (s) with 95% bootstrap interval\n".stamp noenhanced
    set style fill solid 0.6 border -1
    set boxwidth 0.6
    set logscale y
    set ylabel "seconds"
    set xtics rotate by -35 font ",8"
    set key off
    plot raw.'/ttb.dat' using 0:2:xtic(1) with boxes, '' using 0:2:3:4 with yerrorbars lc rgb "black" pt 0
    unset logscale
    set xtics norotate
    set key top left
}

# 5. memory: peak / minimum
if (fexists(raw.'/memory.dat')) {
    set output out.'/memory.png'
    set title "Peak gathered numel / theoretical minimum (DeepSpeed default thresholds)\n".stamp noenhanced
    set style data histogram
    set style histogram cluster gap 1
    set style fill solid 0.8 border -1
    set ylabel "peak / minimum"
    set yrange [0:*]
    set key top left
    plot raw.'/memory.dat' using 3:xtic(2) title "prefetch off", '' using 4 title "prefetch on"
}
