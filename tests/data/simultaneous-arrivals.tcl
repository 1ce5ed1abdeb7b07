# tests/data/simultaneous-arrivals.toml in ns-2.35's OTcl; the trace goes to argv[0].
set ns [new Simulator]
set tf [open [lindex $argv 0] w]
$ns trace-all $tf
set A [$ns node]; set B [$ns node]; set R [$ns node]; set D [$ns node]
$ns duplex-link $A $R 4.096Mb 0.015625 DropTail
$ns duplex-link $B $R 4.096Mb 0.00390625 DropTail
$ns duplex-link $R $D 2.048Mb 0.001 DropTail
$ns queue-limit $R $D 2
foreach {src fid start stop} [list $A 1 0.0 0.003 $B 2 0.013671875 0.0137] {
  set u [new Agent/UDP]; $u set fid_ $fid; $u set packetSize_ 1000
  $ns attach-agent $src $u
  set n [new Agent/Null]; $ns attach-agent $D $n; $ns connect $u $n
  set c [new Application/Traffic/CBR]; $c set packetSize_ 1000; $c set rate_ 4.096Mb; $c set random_ 0
  $c attach-agent $u
  $ns at $start "$c start"; $ns at $stop "$c stop"
}
$ns at 1.0 "close $tf; exit 0"
$ns run
