module {
  func.func public @main(%u: tensor<7xf32>, %m: tensor<5x7xf32>, %e: tensor<0x4xf32>) -> (tensor<5x7xf32>, tensor<7xf32>, tensor<0x4xf32>) {
    %two = stablehlo.constant dense<2.000000e+00> : tensor<7xf32>
    %one = stablehlo.constant dense<1.000000e+00> : tensor<5x7xf32>
    %u1 = stablehlo.multiply %u, %two : tensor<7xf32>
    %m1 = stablehlo.add %m, %one : tensor<5x7xf32>
    %u2 = stablehlo.add %u1, %u : tensor<7xf32>
    %ub = stablehlo.broadcast_in_dim %u2, dims = [1] : (tensor<7xf32>) -> tensor<5x7xf32>
    %m2 = stablehlo.multiply %m1, %ub : tensor<5x7xf32>
    %u3 = stablehlo.negate %u2 : tensor<7xf32>
    %k = stablehlo.constant dense<3.000000e+00> : tensor<0x4xf32>
    %e1 = stablehlo.add %e, %k : tensor<0x4xf32>
    return %m2, %u3, %e1 : tensor<5x7xf32>, tensor<7xf32>, tensor<0x4xf32>
  }
}