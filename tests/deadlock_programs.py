"""Programs that deadlock on purpose, shared by the deadlock tests (one process and MPI)."""

SEND_THEN_RECEIVE = """
; sends 20 values on color {out}, then reads 20 from color {inp}: a blocking exchange
.data
x:    .space i16, 20
.export x
dx:   .dsd mem1d, base=x, length=20, stride=2
dout: .dsd fabric_out, color={out}, length=20, sw=1
din:  .dsd fabric_in, length=20, sw=1, sc=1, utid={inp}
.code
.task main, 40
main: block {inp}
      lds1wds S1[0], dx
      lddwds D[0], dout
      mov16 D[0], S1[0]
      lddwds D[1], dx
      lds1wds S1[1], din
      mov16.t D[1], S1[1]
"""
