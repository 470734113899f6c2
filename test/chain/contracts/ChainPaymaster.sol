// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

/// @notice The user operation as EntryPoint v0.7 hands it to a paymaster.
struct PackedUserOperation {
    address sender;
    uint256 nonce;
    bytes initCode;
    bytes callData;
    bytes32 accountGasLimits;
    uint256 preVerificationGas;
    bytes32 gasFees;
    bytes paymasterAndData;
    bytes signature;
}

/// @notice The chain tests' stand-in for the service's paymaster: it sponsors every operation
/// EntryPoint v0.7 brings it, from its deposit there. The EntryPoint is a constant, not an
/// immutable, so its runtime code works wherever `anvil_setCode` puts it: at the paymaster address
/// of the simulator's batches.
contract ChainPaymaster {
    address private constant ENTRY_POINT = 0x0000000071727De22E5E9d8BAf0edAc6f37da032;

    error NotEntryPoint(address caller);

    function validatePaymasterUserOp(PackedUserOperation calldata, bytes32, uint256)
        external
        view
        returns (bytes memory context, uint256 validationData)
    {
        if (msg.sender != ENTRY_POINT) revert NotEntryPoint(msg.sender);
        return ("", 0);
    }

    /// Never called: an empty context asks for no postOp.
    function postOp(uint8, bytes calldata, uint256, uint256) external view {
        if (msg.sender != ENTRY_POINT) revert NotEntryPoint(msg.sender);
    }
}
