"""The real arm: the dynamixel-sdk recorder (`recorder`, `bus`, `sequencer`) and the Protocol 2.0
emulator that tests it (`emulator`, `protocol`), with the control-table facts both share
(`control_table`). The emulator runs the twin's plant behind a pseudo-terminal, so the recorder
talks to it exactly as it talks to /dev/ttyUSB0."""
