module {
  func.func public @main() -> (tensor<3xf32>, tensor<2xi32>, tensor<2x2xbf16>) {
    %0 = stablehlo.constant dense<"0x0000803F00000040000000BF"> : tensor<3xf32>
    %1 = stablehlo.constant dense<"0x07000000FDFFFFFF"> : tensor<2xi32>
    %2 = stablehlo.constant dense<"0x803F"> : tensor<2x2xbf16>
    return %0, %1, %2 : tensor<3xf32>, tensor<2xi32>, tensor<2x2xbf16>
  }
}
