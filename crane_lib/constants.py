"""Actuator and realization constants of the CRANE-X7, computed from their sources, not retyped.

Axes 1 and 3-8 are ROBOTIS XM430-W350, axis 2 is an XM540-W270 (paper Sec. III-A). The
torque record is current x Kt, with Kt the catalogue constant times the 1.3 correction factor
of the platform's control library. Clamp torques follow from each actuator's default Current
Limit register (e-Manual control table) times the 2.69 mA current unit times Kt.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

N_ARM_JOINTS = 7
N_AXES = 8  # seven arm joints plus the hand axis
HAND_AXIS = 8
GRAVITY = 9.80665  # m/s^2, standard gravity

CURRENT_UNIT_A = 2.69e-3  # A per unit of the Goal Current register
KT_CORRECTION = 1.3  # empirical multiplier of the platform control library (uncalibrated)
ENCODER_BITS = 12  # link-side encoder resolution
ENCODER_COUNTS = 2**ENCODER_BITS
VELOCITY_UNIT_RPM = 0.229  # DYNAMIXEL velocity register unit
CONTROL_PERIOD_S = 1e-3
CLAMP_THRESHOLD_FRACTION = 0.98  # a sample is "clamped" at |u| >= 0.98 of the axis limit


@dataclass(frozen=True)
class Actuator:
    model: str
    kt_catalogue: float  # N·m/A, datasheet torque constant
    current_limit_units: int  # default Current Limit register value
    velocity_limit_units: int  # velocity ceiling used by the command files, register units

    @property
    def kt(self) -> float:
        """Current-to-torque constant used for the torque record (N·m/A)."""
        return self.kt_catalogue * KT_CORRECTION

    @property
    def current_limit_a(self) -> float:
        """The servo's current limit (A)."""
        return self.current_limit_units * CURRENT_UNIT_A

    @property
    def clamp_torque(self) -> float:
        """Largest commandable torque (N·m): current limit times the logged Kt."""
        return self.current_limit_a * self.kt

    @property
    def velocity_ceiling_deg_s(self) -> float:
        """The servo's velocity limit as a link speed (°/s)."""
        return self.velocity_limit_units * VELOCITY_UNIT_RPM * 360.0 / 60.0


XM430_W350 = Actuator(
    "XM430-W350", kt_catalogue=1.783, current_limit_units=1193, velocity_limit_units=200
)
XM540_W270 = Actuator(
    "XM540-W270", kt_catalogue=2.409, current_limit_units=2047, velocity_limit_units=128
)

# axis j (1-based) -> actuator
ACTUATORS: tuple[Actuator, ...] = (XM430_W350, XM540_W270) + (XM430_W350,) * 6

KT = np.array([a.kt for a in ACTUATORS])
CLAMP_TORQUE = np.array([a.clamp_torque for a in ACTUATORS])
VELOCITY_CEILING_DEG_S = np.array([a.velocity_ceiling_deg_s for a in ACTUATORS])
ENCODER_RESOLUTION_RAD = 2.0 * math.pi / ENCODER_COUNTS

# realization controller (2): common position gain; sqrt(K_P) is the nominal bandwidth
REALIZATION_KP = 1000.0  # s^-2
REALIZATION_BANDWIDTH_RAD_S = math.sqrt(REALIZATION_KP)
REALIZATION_BANDWIDTH_HZ = REALIZATION_BANDWIDTH_RAD_S / (2.0 * math.pi)
