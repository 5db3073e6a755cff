"""DYNAMIXEL Protocol 2.0 framing for the emulator's side of the bus (ROBOTIS e-Manual,
https://emanual.robotis.com/docs/en/dxl/protocol2/).

    instruction  FF FF FD 00 | ID | LEN_L LEN_H | INST | parameters ... | CRC_L CRC_H
    status       FF FF FD 00 | ID | LEN_L LEN_H | 0x55 | ERR | parameters ... | CRC_L CRC_H

LEN counts the bytes after itself (instruction or 0x55, error, parameters, CRC). Inside the
part after the header, every FF FF FD is sent as FF FF FD FD ("byte stuffing") and LEN counts
the stuffed length. The CRC is CRC-16 with polynomial 0x8005, initial value 0, no reflection
and no final XOR, over everything before it (stuffed bytes included). Its table is computed
here from the polynomial; tests check it against dynamixel-sdk's own table.

The recorder does not use this module: it talks through dynamixel-sdk, which frames its own
packets. The emulator parses what dynamixel-sdk sends with `PacketReader` and answers with
`status_packet`.
"""

from __future__ import annotations

from dataclasses import dataclass

HEADER = b"\xff\xff\xfd\x00"
BROADCAST_ID = 0xFE
INST_PING, INST_READ, INST_WRITE, INST_REG_WRITE, INST_ACTION, INST_FACTORY_RESET = (
    0x01,
    0x02,
    0x03,
    0x04,
    0x05,
    0x06,
)
INST_REBOOT, INST_CLEAR, INST_STATUS = 0x08, 0x10, 0x55
INST_SYNC_READ, INST_SYNC_WRITE, INST_FAST_SYNC_READ, INST_BULK_READ, INST_BULK_WRITE = (
    0x82,
    0x83,
    0x8A,
    0x92,
    0x93,
)
MAX_PACKET_LENGTH = 1024  # dynamixel-sdk's TXPACKET_MAX_LEN / RXPACKET_MAX_LEN
CRC_POLYNOMIAL = 0x8005


def _crc_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ CRC_POLYNOMIAL) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return tuple(table)


CRC_TABLE = _crc_table()


def crc16(data: bytes | bytearray, crc: int = 0) -> int:
    """CRC-16 of Protocol 2.0 (polynomial 0x8005, initial 0) over `data`."""
    table = CRC_TABLE
    for byte in data:
        crc = ((crc << 8) ^ table[((crc >> 8) ^ byte) & 0xFF]) & 0xFFFF
    return crc


def stuff(body: bytes) -> bytes:
    """Insert FD after every FF FF FD in the part after the header."""
    if b"\xff\xff\xfd" not in body:
        return body
    out = bytearray()
    for byte in body:
        out.append(byte)
        if byte == 0xFD and len(out) >= 3 and out[-3] == 0xFF and out[-2] == 0xFF:
            out.append(0xFD)
    return bytes(out)


def unstuff(body: bytes) -> bytes:
    """Remove the FD inserted after every FF FF FD (the inverse of `stuff`)."""
    if b"\xff\xff\xfd\xfd" not in body:
        return body
    return body.replace(b"\xff\xff\xfd\xfd", b"\xff\xff\xfd")


def _frame(dxl_id: int, body: bytes) -> bytes:
    body = stuff(body)
    length = len(body) + 2
    packet = HEADER + bytes((dxl_id, length & 0xFF, length >> 8)) + body
    crc = crc16(packet)
    return packet + bytes((crc & 0xFF, crc >> 8))


def instruction_packet(dxl_id: int, instruction: int, parameters: bytes = b"") -> bytes:
    """A Protocol 2.0 instruction packet (header, id, length, instruction, CRC)."""
    return _frame(dxl_id, bytes((instruction,)) + bytes(parameters))


def status_packet(dxl_id: int, error: int, parameters: bytes = b"") -> bytes:
    """A Protocol 2.0 status packet with its error byte."""
    return _frame(dxl_id, bytes((INST_STATUS, error & 0xFF)) + bytes(parameters))


@dataclass(frozen=True)
class Packet:
    """One received packet: ID, instruction, unstuffed parameters, and whether its CRC held."""

    dxl_id: int
    instruction: int
    parameters: bytes
    crc_ok: bool
    raw_length: int  # bytes on the wire (header to CRC)


class PacketReader:
    """Splits a byte stream into packets as a servo's receiver does: it hunts for the header,
    waits for LEN bytes, checks the CRC. Bytes before a header are dropped."""

    def __init__(self):
        self.buffer = bytearray()
        self.dropped_bytes = 0

    def feed(self, data: bytes) -> list[Packet]:
        """Add bytes read from the wire and return the whole packets found."""
        self.buffer += data
        packets = []
        while True:
            start = self.buffer.find(HEADER)
            if start < 0:
                keep = (
                    3
                    if self.buffer.endswith(b"\xff\xff\xfd")
                    else (
                        2
                        if self.buffer.endswith(b"\xff\xff")
                        else (1 if self.buffer.endswith(b"\xff") else 0)
                    )
                )
                self.dropped_bytes += len(self.buffer) - keep
                del self.buffer[: len(self.buffer) - keep]
                return packets
            if start:
                self.dropped_bytes += start
                del self.buffer[:start]
            if len(self.buffer) < 7:
                return packets
            length = self.buffer[5] | (self.buffer[6] << 8)
            if length < 3 or length + 7 > MAX_PACKET_LENGTH:  # not a packet: skip this header
                self.dropped_bytes += 1
                del self.buffer[:1]
                continue
            total = 7 + length
            if len(self.buffer) < total:
                return packets
            raw = bytes(self.buffer[:total])
            del self.buffer[:total]
            crc_ok = crc16(raw[:-2]) == (raw[-2] | (raw[-1] << 8))
            body = unstuff(raw[7:-2])
            packets.append(Packet(raw[4], body[0], body[1:], crc_ok, total))
