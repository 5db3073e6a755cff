"""Feetech STS/SCS framing for the emulator's side of the SO-101's bus (the protocol
scservo_sdk speaks with protocol_end 0; its protocol_packet_handler is the reference).

    instruction  FF FF | ID | LEN | INST | parameters ... | CHECKSUM
    status       FF FF | ID | LEN | ERR  | parameters ... | CHECKSUM

LEN counts the bytes after itself (instruction or error, parameters, checksum). The checksum
is the complement of the low byte of the sum of ID, LEN and every byte up to it. There is no
byte stuffing; a receiver that finds a header with an impossible ID or LEN drops one byte and
hunts again (as the SDK's rxPacket does).

SYNC READ (0x82): parameters address, length, then the IDs; each servo answers with its own
status packet, in the order of the IDs. SYNC WRITE (0x83): address, length, then per servo its
ID and `length` bytes; nobody answers.
"""

from __future__ import annotations

from dataclasses import dataclass

HEADER = b"\xff\xff"
BROADCAST_ID = 0xFE
MAX_ID = 0xFC
INST_PING, INST_READ, INST_WRITE, INST_REG_WRITE, INST_ACTION = 0x01, 0x02, 0x03, 0x04, 0x05
INST_SYNC_READ, INST_SYNC_WRITE = 0x82, 0x83
MAX_PACKET_LENGTH = 250  # scservo_sdk's TXPACKET_MAX_LEN / RXPACKET_MAX_LEN


def checksum(body: bytes | bytearray) -> int:
    """The STS checksum of ID, LEN and what follows: ~sum & 0xFF."""
    return ~sum(body) & 0xFF


def _frame(sts_id: int, body: bytes) -> bytes:
    part = bytes((sts_id, len(body) + 1)) + body
    return HEADER + part + bytes((checksum(part),))


def instruction_packet(sts_id: int, instruction: int, parameters: bytes = b"") -> bytes:
    """An STS instruction packet (header, id, length, instruction, checksum)."""
    return _frame(sts_id, bytes((instruction,)) + bytes(parameters))


def status_packet(sts_id: int, error: int, parameters: bytes = b"") -> bytes:
    """An STS status packet with its error byte."""
    return _frame(sts_id, bytes((error & 0x7F,)) + bytes(parameters))


@dataclass(frozen=True)
class Packet:
    """One received packet: ID, instruction, parameters, and whether its checksum held."""

    sts_id: int
    instruction: int
    parameters: bytes
    checksum_ok: bool
    raw_length: int  # bytes on the wire


class PacketReader:
    """Splits a byte stream into packets as a servo's receiver does: hunt for FF FF, wait for
    LEN bytes, check the checksum; bytes before a header are dropped."""

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
                keep = 1 if self.buffer.endswith(b"\xff") else 0
                self.dropped_bytes += len(self.buffer) - keep
                del self.buffer[: len(self.buffer) - keep]
                return packets
            if start:
                self.dropped_bytes += start
                del self.buffer[:start]
            if len(self.buffer) < 4:
                return packets
            sts_id, length = self.buffer[2], self.buffer[3]
            if sts_id == 0xFF or length < 2 or length + 4 > MAX_PACKET_LENGTH:
                self.dropped_bytes += 1  # not a packet (FF FF FF ...): skip one byte
                del self.buffer[:1]
                continue
            total = 4 + length
            if len(self.buffer) < total:
                return packets
            raw = bytes(self.buffer[:total])
            del self.buffer[:total]
            ok = checksum(raw[2:-1]) == raw[-1]
            packets.append(Packet(sts_id, raw[4], raw[5:-1], ok, total))
