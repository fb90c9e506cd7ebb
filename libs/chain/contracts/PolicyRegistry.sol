// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.37;

/// @title PolicyRegistry
/// @notice Records activated insurance policies on chain: one id per policy reference.
/// @dev Only the deployer (owner) may register. `policyRef` is keccak256 of the off-chain
///      policy id; `termsHash` is keccak256 of the canonical JSON of the policy terms.
contract PolicyRegistry {
    error NotOwner();
    error AlreadyRegistered(uint256 id);

    event PolicyRegistered(uint256 indexed id, bytes32 indexed policyRef, bytes32 termsHash);

    address public immutable owner;
    uint256 public lastId;
    mapping(bytes32 policyRef => uint256 id) public idOf;
    mapping(uint256 id => bytes32 termsHash) public termsHashOf;

    constructor() {
        owner = msg.sender;
    }

    /// @notice Registers a policy; ids start at 1 and increase by one.
    function register(bytes32 policyRef, bytes32 termsHash) external returns (uint256 id) {
        if (msg.sender != owner) revert NotOwner();
        uint256 existing = idOf[policyRef];
        if (existing != 0) revert AlreadyRegistered(existing);
        id = ++lastId;
        idOf[policyRef] = id;
        termsHashOf[id] = termsHash;
        emit PolicyRegistered(id, policyRef, termsHash);
    }
}
